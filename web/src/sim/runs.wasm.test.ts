// Explicit windows through the worker's run registry (./runs.ts) on the wasm package: every detail question names
// its window, so two questions about different windows are answered right in either order (nothing depends on
// what was asked before); a run keeps at most WINDOWS_PER_RUN windows; the wake-latency heat map's query counts
// the wake-ups the state lanes show. Needs `npm run build:wasm`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Simulation, initSync } from './pkg/schedsim_wasm.js';
import { adopt, byName, release, runOf, windowsKept, type QueryArgs, type QueryName } from './runs';
import { splitSegments } from './lanes';
import { BLOCKED, RUNNABLE, splitStates, wakeMarks } from '../lib/vcpuStates';
import type { DetailWindow } from './types';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MS = 1e6;

function runToEnd(sim: Simulation): Simulation {
  while (!sim.step(100_000)) {
    // runs to the end
  }
  return sim;
}

function ask<K extends QueryName>(runId: string, name: K, ...args: QueryArgs<K>) {
  return byName[name](runOf(runId), ...args);
}

/** A paper scenario with I/O, cut to 600 ms and measured from 0. */
function scenario(): string {
  const doc = JSON.parse(readFileSync(`${root}scenarios/p003-table5-dom0-idle.json`, 'utf8')) as object;
  return JSON.stringify({ ...doc, duration_ms: 600, warmup_ms: 0 });
}

/** Segments of `flat` within [from, to) (a replay cuts the ones across its edges), as rows. */
function within(flat: Float64Array, w: DetailWindow): number[][] {
  const rows: number[][] = [];
  for (let i = 0; i < flat.length; i += 5)
    if (flat[i + 1]! >= w.from_ns && flat[i + 2]! < w.to_ns) rows.push(Array.from(flat.subarray(i, i + 5)));
  return rows;
}

describe('explicit windows (sim/runs.ts)', () => {
  beforeAll(() => {
    initSync({ module: readFileSync(`${root}web/src/sim/pkg/schedsim_wasm_bg.wasm`) });
  });

  it('answers two windows right in either order, and keeps at most four per run', () => {
    const text = scenario();
    const full = runToEnd(new Simulation(text, 'credit'));
    const a: DetailWindow = { from_ns: 120 * MS, to_ns: 220 * MS };
    const b: DetailWindow = { from_ns: 400 * MS, to_ns: 520 * MS };
    const pcpus = (JSON.parse(full.meta_json()) as { pcpus: number }).pcpus;
    const expected = (w: DetailWindow) => ({
      segments: within(full.segments(), w),
      io: full.io_events_json(w.from_ns, w.to_ns, 100_000),
      decisions: full.decisions_json(w.from_ns, w.to_ns, 100_000),
    });
    const answer = (runId: string, w: DetailWindow) => {
      const { window, lanes } = ask(runId, 'lanes', w);
      expect(window).toEqual(w);
      // The lanes back as flat rows, to compare with the full trace's.
      const flat = lanes.flatMap((l, p) =>
        Array.from(l.start, (s, i) => [
          p,
          Math.round(s * 1e6),
          Math.round(l.end[i]! * 1e6),
          l.vcpu[i]!,
          l.task[i]!,
        ]),
      );
      const rows = within(new Float64Array(flat.flat()), w).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
      return {
        segments: rows,
        io: JSON.stringify(ask(runId, 'ioEvents', w, 100_000)),
        decisions: JSON.stringify(ask(runId, 'decisionsBetween', w, 100_000)),
      };
    };
    const sorted = (w: DetailWindow) => {
      const e = expected(w);
      return { ...e, segments: e.segments.sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!) };
    };
    for (const order of [
      [a, b],
      [b, a],
      [a, b, a, b],
    ]) {
      const runId = `order-${order.length}-${order[0]!.from_ns}`;
      adopt(runId, runToEnd(Simulation.withReplay(text, 'credit', 100, 0)), 1e12, pcpus);
      for (const w of order) {
        const got = answer(runId, w);
        expect(got.segments.length).toBeGreaterThan(0);
        expect(got).toEqual(sorted(w));
      }
      // Asked again, the windows kept answer (no new replay) and still say the same.
      expect(windowsKept(runId)).toHaveLength(2);
      release(runId);
    }
    // A question within a kept window is answered from it; a fifth window frees the least recently used.
    adopt('lru', runToEnd(Simulation.withReplay(text, 'credit', 100, 0)), 1e12, pcpus);
    for (const k of [0, 1, 2, 3, 4])
      ask('lru', 'runqueues', { from_ns: k * 100 * MS, to_ns: (k + 1) * 100 * MS }, 1);
    ask('lru', 'ioEvents', { from_ns: 410 * MS, to_ns: 480 * MS }, 10);
    expect(windowsKept('lru')).toEqual(
      [4, 3, 2, 1].map((k) => ({ from_ns: k * 100 * MS, to_ns: (k + 1) * 100 * MS })),
    );
    release('lru');
    full.free();
  });

  it('counts in the heat map the wake-ups the state lanes mark', () => {
    const text = scenario();
    const sim = runToEnd(Simulation.withReplay(text, 'credit', 100, 0));
    const meta = JSON.parse(sim.meta_json()) as {
      pcpus: number;
      vcpus: { domain: number }[];
      domains: unknown[];
    };
    adopt('heat', sim, 1e12, meta.pcpus);
    const w: DetailWindow = { from_ns: 0, to_ns: 300 * MS };
    const map = ask('heat', 'wakeLatency', w, 30);
    expect(map.length).toBe(meta.domains.length * 30 * 3);
    // The state lanes' wake marks, per domain.
    const lanes = splitStates(ask('heat', 'vcpuStates', w, 1_000_000), meta.vcpus.length);
    const perDomain = new Array<number>(meta.domains.length).fill(0);
    lanes.forEach((lane, v) => (perDomain[meta.vcpus[v]!.domain]! += wakeMarks(lane).length));
    const counted = meta.domains.map((_, d) => {
      let n = 0;
      for (let k = 0; k < 30; k++) n += map[(d * 30 + k) * 3]!;
      return n;
    });
    expect(counted).toEqual(perDomain);
    expect(counted.reduce((x, y) => x + y, 0)).toBeGreaterThan(10);
    // Sanity of the marks' reading: a wake is a blocked span followed by a runnable or running one.
    expect(BLOCKED).not.toBe(RUNNABLE);
    expect(splitSegments(new Float64Array(0), meta.pcpus)).toHaveLength(meta.pcpus);
    release('heat');
  });

  it("measures a replay run's wake-to-run as its full run's (the recorded traces' accumulator)", () => {
    const text = scenario();
    const full = runToEnd(new Simulation(text, 'credit'));
    const replay = runToEnd(Simulation.withReplay(text, 'credit', 100, 0));
    const domains = (JSON.parse(full.meta_json()) as { domains: unknown[] }).domains.length;
    let woke = 0;
    for (let d = 0; d < domains; d++) {
      const f = Array.from(full.distribution(d, 'wake_to_run'));
      expect(Array.from(replay.distribution(d, 'wake_to_run'))).toEqual(f);
      for (let i = 1; i < f.length; i += 2) woke += f[i]!;
    }
    expect(woke).toBeGreaterThan(0);
    full.free();
    replay.free();
  });
});
