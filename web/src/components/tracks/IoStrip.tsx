// The I/O strip: each event-channel notification as a bar from when it became pending until its vCPU ran (a long
// bar is a long scheduling latency); at a zoom too dense for a bar each, the deliveries per pixel column, bar
// height on a log scale against the busiest column (a burst must not flatten every other column to nothing).
import type { DetailWindow, IoRec } from '../../sim/types';
import { fmt } from '../../lib/format';
import { columnAt, columnSpan } from '../../lib/vcpuStates';
import type { Fill, Paint, TrackKind } from './track';

/** Height of the strip [px]. */
export const IO_H = 12;
/** Most notifications asked for per window; beyond it the strip draws the aggregate. */
const IO_LIMIT = 4000;

/** A delivered notification as a bar from when it became pending to when its vCPU ran [ms]. */
interface IoBar {
  readonly from: number;
  readonly to: number;
  readonly rec: IoRec;
}

/** Delivered notifications per column of [fromMs, toMs). */
interface IoCounts {
  readonly counts: Uint32Array;
  readonly buckets: number;
  readonly fromMs: number;
  readonly toMs: number;
}

interface Io {
  readonly bars: readonly IoBar[];
  /** More notifications than were asked for: the bars are cut short. */
  readonly full: boolean;
  /** The aggregate drawn instead of the bars when they are cut short. */
  readonly counts: IoCounts | null;
}

/** Draws the aggregate: per column a bar whose height grows with the log of its deliveries. */
function drawCounts(io: IoCounts, { sx, width, fill }: Paint, color: string): void {
  const max = io.counts.reduce((m, c) => Math.max(m, c), 0);
  if (max === 0) return;
  for (let k = 0; k < io.buckets; k++) {
    const c = io.counts[k]!;
    if (c === 0) continue;
    const [a, b] = columnSpan(io, k);
    const x0 = sx(a);
    const x1 = sx(b);
    if (x1 <= 0 || x0 >= width) continue;
    const h = Math.max(1, ((IO_H - 2) * Math.log1p(c)) / Math.log1p(max));
    fill(x0, IO_H - 1 - h, Math.max(0.75, x1 - x0), h, color, 0.7);
  }
}

function drawBars(bars: readonly IoBar[], { sx, width }: Paint, busy: readonly string[], fill: Fill): void {
  for (const b of bars) {
    const x0 = sx(b.from);
    const x1 = sx(b.to);
    if (x1 <= 0 || x0 >= width) continue;
    const c = busy[b.rec.vcpu] ?? '#888';
    fill(x0, 2, Math.max(1, x1 - x0), IO_H - 4, c, 0.55);
    fill(Math.max(0, x1 - 1), 0, 2, IO_H, c);
  }
}

export const ioStrip: TrackKind<Io> = {
  id: 'io-strip',
  title: 'I/O wait strip',
  make: ({ run, meta, client, busy, theme }) => ({
    height: IO_H,
    update: async (window: DetailWindow, resolution: number) => {
      const recs = await client.query(run.runId, 'ioEvents', window, IO_LIMIT);
      const bars = recs
        .filter((r) => r.phase === 'delivered')
        .map((rec) => ({ from: (rec.t_ns - rec.wait_ns) / 1e6, to: rec.t_ns / 1e6, rec }));
      const full = recs.length >= IO_LIMIT;
      if (!full) return { bars, full, counts: null };
      const buckets = Math.max(1, Math.round(resolution));
      const counts = await client.query(run.runId, 'ioDeliveryCounts', window, buckets);
      return {
        bars,
        full,
        counts: { counts, buckets: counts.length, fromMs: window.from_ns / 1e6, toMs: window.to_ns / 1e6 },
      };
    },
    render: (paint, io) => {
      paint.fill(0, 0, paint.width, IO_H, theme.emptyAlt);
      if (io.counts) drawCounts(io.counts, paint, theme.muted);
      else drawBars(io.bars, paint, busy, paint.fill);
    },
    hover: ({ t, slack, y }, io) => {
      if (!io || y > IO_H) return null;
      if (io.counts) {
        const k = columnAt(io.counts, t);
        if (k < 0) return null;
        const [a, z] = columnSpan(io.counts, k);
        const n = io.counts.counts[k] ?? 0;
        return [
          `${n} notification${n === 1 ? '' : 's'} delivered in ${fmt(a, 6)} – ${fmt(z, 6)} ms`,
          'aggregated at this zoom: zoom in for each wait',
        ];
      }
      const on = io.bars.filter((b) => b.from - slack <= t && t <= b.to + slack);
      const b = on.length > 0 ? on.reduce((a, c) => (c.to - c.from < a.to - a.from ? c : a)) : undefined;
      if (!b) return io.full ? ['too many I/O events here: zoom in'] : null;
      const vcpu = meta.vcpus[b.rec.vcpu]?.name ?? `vCPU ${b.rec.vcpu}`;
      return [
        `${b.rec.kind} notification for ${vcpu}`,
        b.rec.wait_ns > 0
          ? `pending ${fmt(b.rec.wait_ns / 1e6)} ms until the vCPU ran`
          : 'delivered at once (the vCPU was running)',
        `delivered at ${fmt(b.to, 6)} ms`,
      ];
    },
    attrs: (io) => ({
      'data-io': io?.bars.length ?? 0,
      'data-io-aggregate': io?.counts ? 'yes' : undefined,
    }),
    zoom: (io) => ({ aggregated: io?.counts != null, full: io?.full ?? false }),
    labels: (
      <div className="io-label" style={{ height: IO_H }} title="I/O notifications">
        <span className="lane-long">I/O wait</span>
        <span className="lane-short" aria-hidden="true">
          I/O
        </span>
      </div>
    ),
  }),
};
