// Exports: the metrics and the trace window on screen as CSV and JSON, and any view as PNG or SVG.
// The tables are pure functions of the runs (tested beside this file); the images come from the DOM.
import type { Decision } from './decisions';
import type { ClaimResult, Meta, RunReport } from '../sim/types';
import type { Lane } from './series';

/** A CSV field: quoted when it holds a separator, a quote or a line break (RFC 4180). */
export function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  // A leading = + - @ would make a spreadsheet evaluate a scenario's text as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** Every number in a report as [path, value], paths as the claims name them (`domains.web.response_ms.p99`). */
export function flattenReport(report: RunReport): [string, number | boolean][] {
  const out: [string, number | boolean][] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'number' || typeof v === 'boolean') out.push([path, v]);
    else if (typeof v === 'object' && v !== null && !Array.isArray(v))
      for (const [k, c] of Object.entries(v)) walk(c, path ? `${path}.${k}` : k);
  };
  const { policy: _policy, wall_ms: _wall, claims: _claims, ...rest } = report;
  walk(rest, '');
  return out;
}

export interface MetricsRun {
  readonly policy: string;
  readonly label: string;
  readonly report: RunReport;
}

/** The metrics of the runs on screen, long format: one row per policy and metric. */
export function metricsCsv(runs: readonly MetricsRun[]): string {
  const rows = runs.flatMap((r) => flattenReport(r.report).map(([path, v]) => [r.policy, r.label, path, v]));
  return toCsv(['policy', 'label', 'metric', 'value'], rows);
}

export function metricsJson(
  scenario: string | null,
  runs: readonly MetricsRun[],
  claims: readonly ClaimResult[] | null,
): string {
  return (
    JSON.stringify(
      { scenario, runs: runs.map((r) => ({ label: r.label, ...r.report })), claims: claims ?? [] },
      null,
      2,
    ) + '\n'
  );
}

/** One schedule segment: who ran on which pCPU, clipped to the window [ms]. */
export interface TraceSegment {
  readonly pcpu: number;
  readonly start_ms: number;
  readonly end_ms: number;
  readonly vcpu: string;
  readonly domain: string;
  /** "DOMAIN/TASK", or "" when the guest was idle. */
  readonly task: string;
}

/** The segments of `lanes` (per pCPU, lib/series) that intersect [fromMs, toMs], clipped to it. */
export function segmentsInWindow(
  lanes: readonly Lane[],
  meta: Meta,
  fromMs: number,
  toMs: number,
): TraceSegment[] {
  const out: TraceSegment[] = [];
  const a = fromMs * 1e6;
  const b = toMs * 1e6;
  lanes.forEach((lane, pcpu) => {
    for (let i = 0; i < lane.start.length; i++) {
      // The simulator's times are whole nanoseconds: recovered exactly from the lanes' milliseconds.
      const start = Math.round(lane.start[i]! * 1e6);
      const end = Math.round(lane.end[i]! * 1e6);
      if (end < a || start > b) continue;
      const vcpu = meta.vcpus[lane.vcpu[i]!];
      const task = lane.task[i]!;
      out.push({
        pcpu,
        start_ms: Math.max(start, a) / 1e6,
        end_ms: Math.min(end, b) / 1e6,
        vcpu: vcpu?.name ?? String(lane.vcpu[i]),
        domain: vcpu ? (meta.domains[vcpu.domain]?.name ?? '') : '',
        task: task >= 0 ? (meta.tasks[task]?.path ?? String(task)) : '',
      });
    }
  });
  return out.sort((x, y) => x.start_ms - y.start_ms || x.pcpu - y.pcpu);
}

export interface TraceRun {
  readonly policy: string;
  readonly segments: readonly TraceSegment[];
  readonly decisions: readonly Decision[];
  /** The decision list stopped at its limit. */
  readonly truncated: boolean;
}

export function traceJson(
  scenario: string | null,
  window: readonly [number, number],
  runs: readonly TraceRun[],
) {
  return JSON.stringify({ scenario, window_ms: window, runs }, null, 2) + '\n';
}

/** The trace window as one table: segments and decisions interleaved by time. */
export function traceCsv(runs: readonly TraceRun[]): string {
  const rows: unknown[][] = [];
  for (const r of runs) {
    for (const s of r.segments)
      rows.push([r.policy, 'segment', s.start_ms, s.end_ms, s.pcpu, s.domain, s.vcpu, s.task, '']);
    for (const d of r.decisions)
      rows.push([r.policy, 'decision', d.t_ns / 1e6, '', d.pcpu, '', '', '', d.text]);
  }
  rows.sort((x, y) => (x[0] === y[0] ? (x[2] as number) - (y[2] as number) : 0));
  return toCsv(['policy', 'kind', 'start_ms', 'end_ms', 'pcpu', 'domain', 'vcpu', 'task', 'reason'], rows);
}

/** A file name piece from any text: letters, digits, dashes. */
export function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'schedlab'
  );
}

/** Saves a file through the browser's download. */
export function download(name: string, data: Blob | string, type = 'application/octet-stream'): void {
  const blob = typeof data === 'string' ? new Blob([data], { type }) : data;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Where "Open in Perfetto" sends a trace: the Perfetto UI, which takes one by its postMessage protocol. */
export const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';
/** Between PINGs to the Perfetto window until it answers PONG (it is listening once loaded) [ms]. */
const PING_EVERY_MS = 100;
/** How long the Perfetto window has to answer before the page gives up (offline: download instead) [ms]. */
const PERFETTO_WAIT_MS = 30_000;

/**
 * Hands `buffer` (a trace file's bytes) titled `title` to the Perfetto UI in `ui`, a window the page opened on
 * PERFETTO_ORIGIN (opened by the click itself, so that no pop-up blocker stops it): PINGs it until it answers
 * PONG, then posts `{perfetto: {buffer, title}}`. Rejects if it never answers (offline, or the window closed).
 */
export function sendToPerfetto(
  ui: Window,
  buffer: ArrayBuffer,
  title: string,
  host: Window = window,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearInterval(ping);
      clearTimeout(giveUp);
      host.removeEventListener('message', onMessage);
    };
    const onMessage = (e: MessageEvent) => {
      if (e.origin !== PERFETTO_ORIGIN || e.source !== ui || e.data !== 'PONG') return;
      done();
      ui.postMessage({ perfetto: { buffer, title } }, PERFETTO_ORIGIN);
      resolve();
    };
    host.addEventListener('message', onMessage);
    const ping = setInterval(() => {
      if (ui.closed) {
        done();
        reject(new Error('the Perfetto window was closed'));
      } else ui.postMessage('PING', PERFETTO_ORIGIN);
    }, PING_EVERY_MS);
    const giveUp = setTimeout(() => {
      done();
      reject(
        new Error(`${PERFETTO_ORIGIN} did not answer (offline? use "Perfetto JSON" to download the file)`),
      );
    }, PERFETTO_WAIT_MS);
  });
}

/** One column's window for the Perfetto export: its segments and its event-channel notifications. */
export interface PerfettoRun {
  readonly policy: string;
  readonly label: string;
  readonly pcpus: number;
  readonly segments: readonly TraceSegment[];
  /** Delivered notifications: the vCPU named waited `wait_ms` before it ran at `t_ms`. */
  readonly wakeups: readonly {
    readonly t_ms: number;
    readonly wait_ms: number;
    readonly vcpu: string;
    readonly kind: string;
  }[];
}

/** A Trace Event Format event (the subset this export writes). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'M' | 's' | 'f';
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly id?: number;
  readonly bp?: 'e';
  readonly args?: Readonly<Record<string, unknown>>;
}

/** Microseconds, rounded to the nanosecond the simulator keeps. */
const us = (ms: number) => Math.round(ms * 1e6) / 1e3;

/**
 * The window on screen as Trace Event Format JSON (Perfetto, chrome://tracing): a process per column, a thread
 * (track) per pCPU with each vCPU's run as an "X" slice, a "notifications" track with each wake-up's wait, and a
 * flow from the notification to the slice where the woken vCPU ran.
 */
export function perfettoTrace(
  scenario: string | null,
  window: readonly [number, number],
  runs: readonly PerfettoRun[],
): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: Record<string, unknown> } {
  const events: TraceEvent[] = [];
  let flow = 0;
  runs.forEach((r, k) => {
    const pid = k + 1;
    const notifications = r.pcpus + 1;
    events.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `${r.label} (${r.policy})` } });
    events.push({ name: 'process_sort_index', ph: 'M', pid, tid: 0, args: { sort_index: pid } });
    for (let p = 0; p < r.pcpus; p++) {
      events.push({ name: 'thread_name', ph: 'M', pid, tid: p + 1, args: { name: `pCPU ${p}` } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid, tid: p + 1, args: { sort_index: p } });
    }
    events.push({ name: 'thread_name', ph: 'M', pid, tid: notifications, args: { name: 'notifications' } });
    for (const s of r.segments)
      events.push({
        name: s.vcpu,
        cat: s.domain || 'vcpu',
        ph: 'X',
        pid,
        tid: s.pcpu + 1,
        ts: us(s.start_ms),
        dur: us(s.end_ms - s.start_ms),
        args: { domain: s.domain, task: s.task || '(guest idle)' },
      });
    for (const w of r.wakeups) {
      if (!(w.wait_ms > 0)) continue;
      const from = w.t_ms - w.wait_ms;
      if (w.t_ms < window[0] || from > window[1]) continue;
      // The slice where the woken vCPU starts to run at the delivery.
      const ran = r.segments.find((s) => s.vcpu === w.vcpu && Math.abs(s.start_ms - w.t_ms) < 1e-6);
      events.push({
        name: `${w.kind} for ${w.vcpu}`,
        cat: 'notification',
        ph: 'X',
        pid,
        tid: notifications,
        ts: us(from),
        dur: us(w.wait_ms),
        args: { vcpu: w.vcpu, kind: w.kind, wait_ms: w.wait_ms },
      });
      if (!ran) continue;
      const id = ++flow;
      events.push({ name: 'wake-up', cat: 'wakeup', ph: 's', id, pid, tid: notifications, ts: us(from) });
      events.push({
        name: 'wake-up',
        cat: 'wakeup',
        ph: 'f',
        bp: 'e',
        id,
        pid,
        tid: ran.pcpu + 1,
        ts: us(ran.start_ms),
      });
    }
  });
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    otherData: { scenario, window_ms: window, source: 'schedlab' },
  };
}
