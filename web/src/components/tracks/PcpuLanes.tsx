// The pCPU lanes: a lane per pCPU, a rectangle per schedule segment coloured by domain (pale: the guest idle
// loop). A run's opening window comes with the run; other windows are replayed by its worker (query `lanes`).
import type { DetailWindow } from '../../sim/types';
import { segmentAt, visibleRange, type Lane } from '../../lib/series';
import { fmt } from '../../lib/format';
import { LANE_GAP, type TrackKind } from './track';

/** The segments of a window, split into lanes in the worker, and the window they hold. */
interface Lanes {
  readonly window: DetailWindow;
  readonly lanes: readonly Lane[];
}

/** A lane's height in presentation mode [px]: room for its 18 px label, and no more (the lesson's view must fit
 * one screen). */
const PRESENTING_H = 20;

/** Lane height [px]: roomy for a few pCPUs, compact for many; in presentation mode the height of its 18 px label. */
export function laneHeight(pcpus: number, presenting = false): number {
  const h = pcpus <= 2 ? 28 : pcpus <= 8 ? 20 : 12;
  return presenting ? PRESENTING_H : h;
}

/** Extra space between the lanes of two cores on an SMT host [px], so a core's threads read as one group. */
const CORE_GAP = 6;

/** Where lane `p` starts [px] when each lane takes `step` and cores of `tpc` threads are set apart. */
export function laneTop(p: number, step: number, tpc: number): number {
  return p * step + (tpc > 1 ? Math.floor(p / tpc) * CORE_GAP : 0);
}

/** The lane at height `y` [px], or -1 in a gap. */
export function laneAt(y: number, step: number, laneH: number, tpc: number, pcpus: number): number {
  for (let p = 0; p < pcpus; p++) {
    const top = laneTop(p, step, tpc);
    if (y >= top && y <= top + laneH) return p;
  }
  return -1;
}

export const pcpuLanes: TrackKind<Lanes> = {
  id: 'pcpu-lanes',
  title: 'pCPU lanes',
  make: ({ run, meta, client, busy, idle, theme, presenting }) => {
    const laneH = laneHeight(meta.pcpus, presenting);
    const step = laneH + LANE_GAP;
    const tpc = meta.threads_per_core ?? 1;
    return {
      height: laneTop(meta.pcpus - 1, step, tpc) + laneH,
      initial: { window: run.opening, lanes: run.lanes },
      update: (window) => client.query(run.runId, 'lanes', window),
      render: ({ from, to, sx, width, fill }, { lanes }) => {
        lanes.forEach((lane, p) => {
          const y = laneTop(p, step, tpc);
          fill(0, y, width, laneH, theme.empty);
          const [lo, hi] = visibleRange(lane, from, to);
          // Runs of one colour merged; a sliver inside a pixel the current run already paints adds nothing
          // visible: skipped, so a zoomed-out lane of thousands of short runs costs about a rectangle per pixel.
          let color = '';
          let x0 = 0;
          let x1 = -1;
          const flush = () => {
            if (x1 > x0 - 1 && color) fill(x0, y, Math.max(0.75, x1 - x0), laneH, color);
          };
          for (let i = lo; i < hi; i++) {
            const v = lane.vcpu[i]!;
            const c = (lane.task[i]! < 0 ? idle[v] : busy[v]) ?? '#888';
            const a = sx(lane.start[i]!);
            const b = sx(lane.end[i]!);
            if (b - a < 1 && b <= Math.ceil(x1)) continue;
            if (c === color && a - x1 < 0.5) x1 = Math.max(x1, b);
            else {
              flush();
              color = c;
              x0 = a;
              x1 = b;
            }
          }
          flush();
        });
      },
      hover: ({ t, y }, data) => {
        const p = laneAt(y, step, laneH, tpc, meta.pcpus);
        const lane = p < 0 ? undefined : data?.lanes[p];
        if (!lane) return null;
        const i = segmentAt(lane, t);
        const core = tpc > 1 ? ` (core ${Math.floor(p / tpc)}, thread ${p % tpc})` : '';
        if (i < 0) return [`pCPU ${p}${core} idle`, `t = ${fmt(t, 6)} ms`];
        const vcpu = meta.vcpus[lane.vcpu[i]!];
        const task = lane.task[i]! >= 0 ? meta.tasks[lane.task[i]!] : undefined;
        const domain = vcpu ? meta.domains[vcpu.domain] : undefined;
        return [
          `${vcpu?.name ?? `vCPU ${lane.vcpu[i]}`} (${domain?.name ?? '?'}) on pCPU ${p}${core}`,
          task ? `task ${task.path}` : 'guest idle loop',
          `${fmt(lane.start[i]!, 6)} – ${fmt(lane.end[i]!, 6)} ms (${fmt(lane.end[i]! - lane.start[i]!)} ms)`,
        ];
      },
      // How many segments the window on screen shows (a test hook).
      viewAttrs: ([t0, t1], data) => ({
        'data-segments': (data?.lanes ?? []).reduce((sum, lane) => {
          const [lo, hi] = visibleRange(lane, t0, t1);
          return sum + hi - lo;
        }, 0),
      }),
      labels: Array.from({ length: meta.pcpus }, (_, p) => {
        const gap = p < meta.pcpus - 1 ? laneTop(p + 1, step, tpc) - laneTop(p, step, tpc) - laneH : 0;
        // On an SMT host a core's threads share a bracket on the left (the hover names core and thread).
        const smt = tpc > 1;
        const style = smt
          ? { height: laneH, marginBottom: gap, borderLeft: '2px solid currentColor', paddingLeft: 3 }
          : { height: laneH, marginBottom: gap };
        return (
          <div key={p} style={style} data-core={smt ? Math.floor(p / tpc) : undefined}>
            {/* Presentation mode's large type fits only the short form (styles.css). */}
            <span className="lane-long">{'pCPU\u00a0'}</span>
            <span className="lane-short" aria-hidden="true">
              P
            </span>
            {p}
          </div>
        );
      }),
    };
  },
};
