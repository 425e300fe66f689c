// The wake-to-run latency heat map: a row per domain, a cell per pixel column, coloured by the mean time its vCPUs
// waited from a wake-up to running (as the state lanes' wake ticks show them one by one), on a log scale from
// pale (short) to dark red (the longest in the window); a column without wake-ups left empty. The simulator counts
// them over the window (wasm `wake_latency_map`, query `wakeLatency`).
import type { DetailWindow } from '../../sim/types';
import { fmt } from '../../lib/format';
import { columnAt, columnSpan } from '../../lib/vcpuStates';
import type { TrackKind } from './track';

/** A domain's row and the gap under it [px]. */
const ROW_H = 8;
const ROW_GAP = 1;
/** Most domains given a row (a host of many shows its first ones; hovering names them). */
const MAX_ROWS = 24;
/** Most columns asked for: the map's size is domains x columns x 3 numbers. */
const MAX_BUCKETS = 4096;
/** The shortest latency the scale tells apart [ms]: a wake-up that ran at once is drawn at the pale end. */
const FLOOR_MS = 1e-3;

interface WakeMap {
  /** At `(domain * buckets + column) * 3`: wake-ups, summed latency [ns], longest latency [ns]. */
  readonly map: Float64Array;
  readonly buckets: number;
  readonly fromMs: number;
  readonly toMs: number;
  /** The longest mean of a cell [ms]: the dark end of the scale. */
  readonly maxMs: number;
}

/** Pale yellow -> orange -> dark red, at `k` in [0, 1]. */
function heat(k: number): string {
  const stops = [
    [255, 237, 160],
    [240, 120, 40],
    [128, 0, 38],
  ] as const;
  const x = Math.min(1, Math.max(0, k)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const [a, b] = [stops[i]!, stops[i + 1]!];
  const c = a.map((v, j) => Math.round(v + (b[j]! - v) * f));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** Where a mean latency [ms] falls on the scale up to `maxMs` (log). */
function scaled(ms: number, maxMs: number): number {
  const top = Math.log(Math.max(maxMs, FLOOR_MS * 10) / FLOOR_MS);
  return Math.log(Math.max(ms, FLOOR_MS) / FLOOR_MS) / top;
}

export const wakeLatency: TrackKind<WakeMap> = {
  id: 'wake-latency',
  title: 'wake-to-run latency map',
  optional: true,
  make: ({ run, meta, client, theme }) => {
    const domains = meta.domains.slice(0, MAX_ROWS);
    const step = ROW_H + ROW_GAP;
    const nd = meta.domains.length;
    return {
      height: domains.length * step,
      update: async (window: DetailWindow, resolution: number) => {
        const buckets = Math.max(1, Math.min(MAX_BUCKETS, Math.round(resolution)));
        const map = await client.query(run.runId, 'wakeLatency', window, buckets);
        let maxMs = 0;
        for (let i = 0; i < map.length; i += 3)
          if (map[i]! > 0) maxMs = Math.max(maxMs, map[i + 1]! / map[i]! / 1e6);
        return { map, buckets, fromMs: window.from_ns / 1e6, toMs: window.to_ns / 1e6, maxMs };
      },
      render: ({ sx, width, fill }, m) => {
        domains.forEach((_, d) => {
          const y = d * step;
          fill(0, y, width, ROW_H, theme.empty);
          for (let k = 0; k < m.buckets; k++) {
            const o = (d * m.buckets + k) * 3;
            const n = m.map[o]!;
            if (!(n > 0)) continue;
            const [a, b] = columnSpan(m, k);
            const x0 = sx(a);
            const x1 = sx(b);
            if (x1 <= 0 || x0 >= width) continue;
            fill(x0, y, Math.max(0.75, x1 - x0), ROW_H, heat(scaled(m.map[o + 1]! / n / 1e6, m.maxMs)));
          }
        });
      },
      hover: ({ t, y }, m) => {
        const d = Math.floor(y / step);
        const domain = domains[d];
        if (!domain || !m || y - d * step > ROW_H) return null;
        const k = columnAt(m, t);
        if (k < 0) return [`${domain.name}: no detail here yet`];
        const o = (d * m.buckets + k) * 3;
        const n = m.map[o] ?? 0;
        const [a, b] = columnSpan(m, k);
        const when = `${fmt(a, 6)} – ${fmt(b, 6)} ms`;
        if (n === 0) return [`${domain.name}: no wake-ups in ${when}`];
        return [
          `${domain.name}: ${n} wake-up${n === 1 ? '' : 's'} in ${when}`,
          `wake to run: mean ${fmt(m.map[o + 1]! / n / 1e6)} ms, longest ${fmt(m.map[o + 2]! / 1e6)} ms`,
        ];
      },
      attrs: (m) => ({
        'data-wake-latency': m ? m.map.reduce((n, v, i) => (i % 3 === 0 ? n + v : n), 0) : undefined,
      }),
      labels: [
        ...domains.map((d, i) => (
          <div
            key={d.name}
            className="state-label"
            style={{ height: ROW_H, marginBottom: ROW_GAP }}
            title={`${d.name}: mean wake-to-run latency`}
          >
            <span>{i === 0 && nd > MAX_ROWS ? `${d.name} (+${nd - MAX_ROWS})` : d.name}</span>
          </div>
        )),
      ],
    };
  },
};
