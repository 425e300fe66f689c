import { describe, expect, it, vi } from 'vitest';
import {
  csvField,
  flattenReport,
  metricsCsv,
  PERFETTO_ORIGIN,
  perfettoTrace,
  segmentsInWindow,
  sendToPerfetto,
  slug,
  traceCsv,
  toCsv,
} from './exports';
import type { Meta, RunReport } from '../sim/types';
import { splitSegments } from './series';

const report: RunReport = {
  policy: 'credit',
  scheduler: 'credit',
  sim_ms: 100,
  events: 5,
  wall_ms: 3,
  host: { busy_share: 0.2, context_switches: 7 },
  domains: {
    web: {
      cpu_ms: 10,
      cpu_share: 0.1,
      fair_share: 0.5,
      entitled_share: 0.5,
      context_switches: 7,
      migrations: 0,
      response_ms: { count: 2, mean: 1.5, p50: 1, p90: 2, p99: 2, max: 2 },
      busy: false,
    },
  },
  tasks: { 'web/srv': { cpu_ms: 10 } },
  fairness: { jain: 0.9, max_abs_lag_ms: 1, basis: 'domain_weight', rule: 'domain_weight' },
  claims: [{ text: 'web is fast', holds: true, policy: 'credit', values: {} }],
};

const meta: Meta = {
  scenario: 's',
  policy: 'credit',
  label: 'Xen Credit',
  pcpus: 2,
  duration_ns: 100e6,
  warmup_ns: 0,
  domains: [
    { name: 'web', role: 'guest', vcpus: 1, weight: 256, cap_pct: 0, color_index: 0, concurrent: false },
  ],
  vcpus: [{ domain: 0, index: 0, name: 'web.0' }],
  tasks: [{ domain: 0, name: 'srv', path: 'web/srv' }],
  decisions: 1,
  decisions_dropped: 0,
  trace_detail_from_ns: 0,
  trace_detail_until_ns: null,
  trace_bytes: 0,
  caps: { co_schedules: false, beliefs: false, lag: false },
};

describe('csv', () => {
  it('quotes separators and defuses spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(-1.5)).toBe('-1.5');
    expect(toCsv(['a', 'b'], [[1, null]])).toBe('a,b\r\n1,\r\n');
  });
});

describe('metrics', () => {
  it('flatten to the claims metric paths, without wall-clock time', () => {
    const flat = Object.fromEntries(flattenReport(report));
    expect(flat['domains.web.response_ms.p99']).toBe(2);
    expect(flat['fairness.jain']).toBe(0.9);
    expect(flat).not.toHaveProperty('wall_ms');
    expect(Object.keys(flat).some((k) => k.startsWith('claims'))).toBe(false);
    const csv = metricsCsv([{ policy: 'credit', label: 'Xen Credit', report }]).split('\r\n');
    expect(csv[0]).toBe('policy,label,metric,value');
    expect(csv).toContain('credit,Xen Credit,domains.web.cpu_share,0.1');
  });
});

describe('trace window', () => {
  it('keeps the segments that meet the window, clipped to it, and names them', () => {
    // pcpu, start_ns, end_ns, vcpu, task
    const flat = Float64Array.from([0, 0, 5e6, 0, 0, 1, 8e6, 30e6, 0, -1, 0, 40e6, 50e6, 0, 0]);
    const segs = segmentsInWindow(splitSegments(flat, 2), meta, 10, 45);
    expect(segs).toEqual([
      { pcpu: 1, start_ms: 10, end_ms: 30, vcpu: 'web.0', domain: 'web', task: '' },
      { pcpu: 0, start_ms: 40, end_ms: 45, vcpu: 'web.0', domain: 'web', task: 'web/srv' },
    ]);
    const csv = traceCsv([
      {
        policy: 'credit',
        segments: segs,
        decisions: [{ t_ns: 20e6, pcpu: 0, text: 'web.0 BOOST' }],
        truncated: false,
      },
    ]).split('\r\n');
    expect(csv[0]).toBe('policy,kind,start_ms,end_ms,pcpu,domain,vcpu,task,reason');
    expect(csv.slice(1, 4)).toEqual([
      'credit,segment,10,30,1,web,web.0,,',
      'credit,decision,20,,0,,,,web.0 BOOST',
      'credit,segment,40,45,0,web,web.0,web/srv,',
    ]);
  });

  it('makes safe file names', () => {
    expect(slug('Credit: BOOST <script>')).toBe('credit-boost-script');
    expect(slug('***')).toBe('schedlab');
  });
});

describe('perfettoTrace', () => {
  const run = {
    policy: 'credit',
    label: 'Xen Credit',
    pcpus: 2,
    segments: [
      { pcpu: 0, start_ms: 1, end_ms: 2.5, vcpu: 'a.v0', domain: 'a', task: 'a/t' },
      { pcpu: 1, start_ms: 3, end_ms: 4, vcpu: 'b.v0', domain: 'b', task: '' },
    ],
    wakeups: [
      { t_ms: 3, wait_ms: 0.5, vcpu: 'b.v0', kind: 'packet' },
      { t_ms: 2, wait_ms: 0, vcpu: 'a.v0', kind: 'timer' },
    ],
  };
  const trace = perfettoTrace('s', [0, 5], [run]);

  it('writes a track per pCPU and the vCPU runs as X slices in microseconds', () => {
    const names = trace.traceEvents.filter((e) => e.name === 'thread_name').map((e) => e.args?.name);
    expect(names).toEqual(['pCPU 0', 'pCPU 1', 'notifications']);
    const x = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat !== 'notification');
    expect(x).toHaveLength(2);
    expect(x[0]).toMatchObject({ name: 'a.v0', ts: 1000, dur: 1500, tid: 1, pid: 1 });
    expect(x[1]).toMatchObject({ name: 'b.v0', ts: 3000, dur: 1000, tid: 2 });
  });

  it('joins a wake-up to the slice it woke with a flow', () => {
    const s = trace.traceEvents.filter((e) => e.ph === 's');
    const f = trace.traceEvents.filter((e) => e.ph === 'f');
    expect(s).toHaveLength(1);
    expect(f).toHaveLength(1);
    expect(s[0]).toMatchObject({ ts: 2500, tid: 3 });
    expect(f[0]).toMatchObject({ ts: 3000, tid: 2, id: s[0]!.id, bp: 'e' });
  });

  it('gives every event the fields the format requires', () => {
    for (const e of JSON.parse(JSON.stringify(trace)).traceEvents) {
      expect(typeof e.name).toBe('string');
      expect(typeof e.ph).toBe('string');
      expect(Number.isInteger(e.pid)).toBe(true);
      expect(Number.isInteger(e.tid)).toBe(true);
      if (e.ph !== 'M') expect(typeof e.ts).toBe('number');
      if (e.ph === 'X') expect(e.dur).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('sendToPerfetto', () => {
  /** A window stand-in: what the page posts to it, and a way to answer as Perfetto would. */
  function fakeUi() {
    const host = new EventTarget() as unknown as Window;
    const posted: unknown[] = [];
    const ui = {
      closed: false,
      postMessage: (data: unknown, origin: string) => {
        expect(origin).toBe(PERFETTO_ORIGIN);
        posted.push(data);
      },
    } as unknown as Window;
    // A plain event with a message's fields (Node's MessageEvent takes only a MessagePort as source).
    const answer = (data: unknown, origin = PERFETTO_ORIGIN) =>
      host.dispatchEvent(Object.assign(new Event('message'), { data, origin, source: ui }));
    return { host, ui, posted, answer };
  }

  it('pings until Perfetto answers PONG, then posts the buffer and its title', async () => {
    vi.useFakeTimers();
    try {
      const { host, ui, posted, answer } = fakeUi();
      const buffer = new TextEncoder().encode('{"traceEvents":[]}').buffer;
      const sent = sendToPerfetto(ui, buffer, 'a title', host);
      vi.advanceTimersByTime(250);
      expect(posted).toEqual(['PING', 'PING']);
      answer('PONG', 'https://elsewhere.example');
      expect(posted).toHaveLength(2);
      answer('PONG');
      await sent;
      expect(posted[2]).toEqual({ perfetto: { buffer, title: 'a title' } });
      vi.advanceTimersByTime(1000);
      expect(posted).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up, saying so, when Perfetto never answers', async () => {
    vi.useFakeTimers();
    try {
      const { host, ui } = fakeUi();
      const sent = sendToPerfetto(ui, new ArrayBuffer(1), 't', host);
      const failed = expect(sent).rejects.toThrow(/did not answer/);
      vi.advanceTimersByTime(31_000);
      await failed;
    } finally {
      vi.useRealTimers();
    }
  });
});
