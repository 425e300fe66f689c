// Readable run-queue motion: at speeds up to 1x the run queues play the scheduler's decisions one at a
// time, each a step the chips slide to and then hold, rather than jumping between whatever states the refreshes
// happen to catch. A snapshot change of one pCPU is split into the decisions it is made of (the vCPUs that left,
// a wake-up or BOOST taking its place in the queue, the dispatch), and the snapshots of one instant stay apart
// (the simulator keeps them in order), so a BOOSTed vCPU is seen at the head of the queue before it runs.
import type { RunQueueChange, RunQueueEntry } from '../sim/types';
import { queueRow, rowKey, type QueueRow } from './runqueueLayout';

/** How long a step's chips take to reach their new places [ms]: a third fading out the chips that change order,
 * a third sliding the others, a third fading in the ones that arrive (`stepFrame`). */
export const SLIDE_MS = 330;
/** How long a step holds still before the next one [ms]: the chips settle between moves. */
export const HOLD_MS = 180;
/** Most steps waiting to be played; older ones are jumped over so the queues never lag far behind the playhead. */
export const MAX_BACKLOG = 3;
/** Least speed-up (simulated per wall-clock time) above which the queues jump instead of moving. */
export const MOTION_MAX_SPEED = 1.5;

export type { RunQueueChange };

/** One pCPU's row as one decision left it. */
export interface RowStep {
  readonly pcpu: number;
  readonly row: QueueRow;
}

function row(running: RunQueueEntry | null, queued: readonly RunQueueEntry[]): QueueRow {
  return queueRow({ t_ns: 0, running, queued: [...queued] });
}

/**
 * The decisions that take one pCPU's queue from `from` to `to`, as the rows to show one after another (without
 * `from` itself, and without steps that change nothing): first the vCPUs that left the pCPU go (a block, a
 * migration; the pCPU shows idle if its running vCPU left); then the queue takes its new order with the vCPU about
 * to be dispatched at its head (a wake-up, a BOOST jumping the queue); last the dispatch.
 */
export function decompose(from: QueueRow, to: QueueRow): QueueRow[] {
  const ids = (r: QueueRow) => new Set(r.entries.map((e) => e.vcpu));
  const stays = ids(to);
  const runFrom = from.running ? from.entries[0]! : null;
  const runTo = to.running ? to.entries[0]! : null;
  const queuedTo = to.running ? to.entries.slice(1) : to.entries;
  // 1. Who left goes.
  const keptRun = runFrom && stays.has(runFrom.vcpu) ? runFrom : null;
  const left = row(
    keptRun,
    (from.running ? from.entries.slice(1) : from.entries).filter((e) => stays.has(e.vcpu)),
  );
  // 2. The new order, the running vCPU still running (or the pCPU idle): the one to dispatch waits at the head.
  const dispatching = runTo && runTo.vcpu !== keptRun?.vcpu ? [runTo] : [];
  const order = row(keptRun, [...dispatching, ...queuedTo.filter((e) => e.vcpu !== keptRun?.vcpu)]);
  const steps: QueueRow[] = [];
  let last = rowKey(from);
  for (const r of [left, order, to]) {
    const k = rowKey(r);
    if (k !== last) steps.push(r);
    last = k;
  }
  return steps;
}

/** The steps of a window's snapshot changes, from the rows shown at its start (`from`, by pCPU). */
export function planSteps(from: readonly QueueRow[], changes: readonly RunQueueChange[]): RowStep[] {
  const at = [...from];
  const out: RowStep[] = [];
  for (const c of changes) {
    const prev = at[c.pcpu] ?? queueRow(null);
    const next = queueRow(c);
    for (const r of decompose(prev, next)) out.push({ pcpu: c.pcpu, row: r });
    at[c.pcpu] = next;
  }
  return out;
}

/**
 * Keeps the last `max` steps of `queue`; of the ones dropped, returns the last of each pCPU that no kept step
 * follows, for drawing at once (so every pCPU ends in its latest state).
 */
export function trimBacklog(queue: readonly RowStep[], max: number): { kept: RowStep[]; jumps: RowStep[] } {
  if (queue.length <= max) return { kept: [...queue], jumps: [] };
  const kept = queue.slice(queue.length - max);
  const later = new Set(kept.map((s) => s.pcpu));
  const jumps = new Map<number, RowStep>();
  for (const s of queue.slice(0, queue.length - max)) if (!later.has(s.pcpu)) jumps.set(s.pcpu, s);
  return { kept, jumps: [...jumps.values()] };
}

/** Where a chip is drawn [px] and how opaque. */
export interface ChipPlace {
  readonly x: number;
  readonly y: number;
  readonly alpha: number;
}

/** Indices of a longest strictly increasing subsequence of `xs`. */
function increasing(xs: readonly number[]): Set<number> {
  const tails: number[] = [];
  const prev = new Array<number>(xs.length).fill(-1);
  for (let i = 0; i < xs.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[tails[mid]!]! < xs[i]!) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1]!;
    tails[lo] = i;
  }
  const out = new Set<number>();
  for (let i = tails[tails.length - 1] ?? -1; i >= 0; i = prev[i]!) out.add(i);
  return out;
}

/**
 * A step's chips at `ease` (0..1), from where they were drawn (`was`, by vCPU) to their new slots (`to`, in the
 * row's order), such that no two chips on screen ever overlap and no text is drawn over another: the chips that
 * keep their line and their order relative to each other slide (on one line, in order, they keep their spacing);
 * those that change line or order (a BOOSTed vCPU jumping the queue) fade out where they were in the first third
 * and in at their new slot in the last, while the others slide in the middle third; new chips fade in last.
 */
export function stepFrame(
  was: ReadonlyMap<number, { readonly x: number; readonly y: number }>,
  to: ReadonlyMap<number, { readonly x: number; readonly y: number }>,
  ease: number,
): Map<number, ChipPlace> {
  const common = [...to.keys()].filter((v) => was.get(v)?.y === to.get(v)!.y);
  const keep = increasing(common.map((v) => was.get(v)!.x));
  const sliding = new Set(common.filter((_, i) => keep.has(i)));
  const phase = Math.min(1, Math.max(0, ease)) * 3;
  const smooth = (k: number) => k * k * (3 - 2 * k);
  const out = new Map<number, ChipPlace>();
  for (const [v, end] of to) {
    const start = was.get(v);
    if (sliding.has(v)) {
      const k = smooth(Math.min(1, Math.max(0, phase - 1)));
      out.set(v, { x: start!.x + (end.x - start!.x) * k, y: end.y, alpha: 1 });
    } else if (start && phase < 1) out.set(v, { x: start.x, y: start.y, alpha: 1 - phase });
    else if (phase > 2) out.set(v, { x: end.x, y: end.y, alpha: phase - 2 });
  }
  return out;
}
