// The replay contract through the wasm package: a run built with `Simulation.withReplay` holds no
// detail until `focusWindow`, which then answers the detail queries for the window as a full run does (the core's
// `sim::replay` tests compare every query on many scenarios; this checks the bindings), and its overview (shares,
// the inference's buckets) equals a full run's. Needs `npm run build:wasm`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Simulation, initSync } from './pkg/schedsim_wasm.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MS = 1e6;

function runToEnd(sim: Simulation): Simulation {
  while (!sim.step(100_000)) {
    // runs to the end
  }
  return sim;
}

describe('Simulation.withReplay / focusWindow', () => {
  beforeAll(() => {
    initSync({ module: readFileSync(`${root}web/src/sim/pkg/schedsim_wasm_bg.wasm`) });
  });

  it('answers a window like the full trace, and the overview like a full run', () => {
    const doc = JSON.parse(readFileSync(`${root}scenarios/p000-fig10-partial-boost.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    const text = JSON.stringify({ ...doc, duration_ms: 600, warmup_ms: 0 });
    const full = runToEnd(new Simulation(text, 'tavs'));
    const replay = runToEnd(Simulation.withReplay(text, 'tavs', 100, 0));
    try {
      expect(replay.segments().length).toBe(0);
      expect(replay.share_series(10)).toEqual(full.share_series(10));
      // The belief chart's whole-run series: the replay run's overview buckets equal the full trace's.
      const inference = full.inference_json();
      expect((JSON.parse(inference) as { beliefs: unknown[] }).beliefs.length).toBeGreaterThan(0);
      expect(replay.inference_json()).toBe(inference);
      const [from, to] = [250 * MS, 420 * MS];
      expect(replay.focusWindow(from, to)).toBe(true);
      const decisions = full.decisions_json(from, to, 100_000);
      expect(JSON.parse(decisions).length).toBeGreaterThan(0);
      expect(replay.decisions_json(from, to, 100_000)).toBe(decisions);
      expect(replay.io_events_json(from, to, 100_000)).toBe(full.io_events_json(from, to, 100_000));
      expect(replay.task_states_json(from, to, 100_000)).toBe(full.task_states_json(from, to, 100_000));
      // Segments within the window (at its edges a replay cuts them: the first begins at the checkpoint, the last
      // ends at the window's end).
      const inWindow = (flat: Float64Array) => {
        const rows: number[][] = [];
        for (let i = 0; i < flat.length; i += 5) {
          const [start, end] = [flat[i + 1]!, flat[i + 2]!];
          if (start >= from && end < to) rows.push(Array.from(flat.subarray(i, i + 5)));
        }
        return rows;
      };
      expect(inWindow(replay.segments()).length).toBeGreaterThan(0);
      expect(inWindow(replay.segments())).toEqual(inWindow(full.segments()));
      const meta = JSON.parse(replay.meta_json()) as {
        trace_detail_from_ns: number;
        trace_detail_until_ns: number;
      };
      expect(meta.trace_detail_from_ns).toBeLessThanOrEqual(from);
      expect(meta.trace_detail_until_ns).toBe(to);
      // The state lanes speak only for the window held: asked past it, no span is stretched beyond its end, and
      // within it they are the full trace's.
      const spans = (flat: Float64Array) => {
        const rows: number[][] = [];
        for (let i = 0; i < flat.length; i += 4) rows.push(Array.from(flat.subarray(i, i + 4)));
        return rows;
      };
      const wide = spans(replay.vcpu_states(from, to + 100 * MS, 100_000));
      expect(wide.length).toBeGreaterThan(0);
      expect(Math.max(...wide.map((r) => r[2]!))).toBeLessThanOrEqual(to);
      expect(spans(replay.vcpu_states(from, to, 100_000))).toEqual(
        spans(full.vcpu_states(from, to, 100_000)),
      );
    } finally {
      full.free();
      replay.free();
    }
  });
});
