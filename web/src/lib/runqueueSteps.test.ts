import { describe, expect, it } from 'vitest';
import type { RunQueueEntry } from '../sim/types';
import { queueRow, rowKey, type QueueRow } from './runqueueLayout';
import { decompose, planSteps, stepFrame, trimBacklog, type RunQueueChange } from './runqueueSteps';
import { CHIP_H, CHIP_W, slotPosition } from './runqueueLayout';

const e = (vcpu: number, pri = 'UNDER'): RunQueueEntry => ({
  vcpu,
  pri,
  class: pri === 'BOOST' ? 'boost' : 'under',
});
const snap = (running: RunQueueEntry | null, ...queued: RunQueueEntry[]) =>
  queueRow({ t_ns: 0, running, queued });
/** A row as text: "*running" then the queue, e.g. "*0 1 2"; "idle 1" when nothing runs. */
const show = (r: QueueRow) =>
  (r.running ? '*' : 'idle ') + r.entries.map((x) => `${x.vcpu}${x.pri === 'BOOST' ? 'B' : ''}`).join(' ');

describe('run-queue steps', () => {
  it('shows a BOOSTed wake-up at the head of the queue before its dispatch', () => {
    const from = snap(e(0), e(1));
    const to = snap(e(2, 'BOOST'), e(0), e(1));
    expect(decompose(from, to).map(show)).toEqual(['*0 2B 1', '*2B 0 1']);
  });

  it('shows a block, then the dispatch of the head', () => {
    expect(decompose(snap(e(0), e(1), e(2)), snap(e(1), e(2))).map(show)).toEqual(['idle 1 2', '*1 2']);
  });

  it('makes one step of a change that is one decision, and none of no change', () => {
    // A slice ends: the head runs, the old runner goes to the tail.
    expect(decompose(snap(e(0), e(1), e(2)), snap(e(1), e(2), e(0))).map(show)).toEqual(['*1 2 0']);
    // A wake-up joins the queue.
    expect(decompose(snap(e(0), e(1)), snap(e(0), e(3), e(1))).map(show)).toEqual(['*0 3 1']);
    // A credit update only.
    const a = snap(e(0));
    const b = snap({ vcpu: 0, pri: 'UNDER', class: 'under', credit: 5 });
    expect(decompose(a, b)).toEqual([b]);
    expect(decompose(a, a)).toEqual([]);
  });

  it('plays the snapshots of one instant one after another, pCPU by pCPU', () => {
    const changes: RunQueueChange[] = [
      { pcpu: 0, t_ns: 10, running: e(0), queued: [e(2, 'BOOST'), e(1)] },
      { pcpu: 0, t_ns: 10, running: e(2, 'BOOST'), queued: [e(0), e(1)] },
      { pcpu: 1, t_ns: 10, running: null, queued: [] },
    ];
    const steps = planSteps([snap(e(0), e(1)), snap(e(3))], changes);
    expect(steps.map((s) => `${s.pcpu}: ${show(s.row)}`)).toEqual(['0: *0 2B 1', '0: *2B 0 1', '1: idle ']);
    // Each pCPU ends in its last snapshot's state.
    expect(rowKey(steps[1]!.row)).toBe(rowKey(queueRow(changes[1]!)));
  });

  it('jumps over an old backlog but still ends every pCPU in its latest state', () => {
    const r = (k: number) => snap(e(k));
    const queue = [
      { pcpu: 0, row: r(1) },
      { pcpu: 1, row: r(2) },
      { pcpu: 0, row: r(3) },
      { pcpu: 2, row: r(4) },
      { pcpu: 0, row: r(5) },
    ];
    const { kept, jumps } = trimBacklog(queue, 2);
    expect(kept).toEqual(queue.slice(3));
    // pCPU 1's only step is dropped: drawn at once; pCPU 0's dropped steps are followed by a kept one.
    expect(jumps).toEqual([queue[1]]);
    expect(trimBacklog(queue, 9)).toEqual({ kept: queue, jumps: [] });
  });
});

describe('stepFrame', () => {
  /** Slots of vCPUs in a row of `perRow` chips, by vCPU. */
  const slots = (order: readonly number[], perRow: number, first = 0) =>
    new Map(order.map((v, i) => [v, slotPosition(i + first, perRow)]));
  const overlap = (a: { x: number; y: number }, b: { x: number; y: number }) =>
    Math.abs(a.x - b.x) < CHIP_W && Math.abs(a.y - b.y) < CHIP_H;

  it('never draws two chips over each other, whatever the step moves', () => {
    const cases: [number[], number[], number][] = [
      [[1, 2, 3, 4], [4, 1, 2, 3], 4], // a BOOSTed vCPU jumps the queue
      [[1, 2, 3, 4], [2, 3, 4, 1], 4], // the running one goes to the tail
      [[1, 2, 3, 4, 5], [5, 4, 3, 2, 1], 3], // reversed over two lines
      [[1, 2, 3], [3, 7, 1, 2], 2], // one arrives, one jumps, lines wrap
      [[1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], 4],
    ];
    for (const [from, to, perRow] of cases) {
      const was = slots(from, perRow);
      const end = slots(to, perRow);
      for (let k = 0; k <= 1.0001; k += 0.01) {
        const drawn = [...stepFrame(was, end, k).values()].filter((p) => p.alpha > 0);
        for (let i = 0; i < drawn.length; i++)
          for (let j = i + 1; j < drawn.length; j++)
            expect(overlap(drawn[i]!, drawn[j]!), `${from} -> ${to} at ${k.toFixed(2)}`).toBe(false);
      }
      // It ends with every chip in its slot, fully drawn.
      expect(stepFrame(was, end, 1)).toEqual(new Map([...end].map(([v, p]) => [v, { ...p, alpha: 1 }])));
    }
  });

  it('slides the chips that keep their order, and fades only the one that jumps', () => {
    const was = slots([1, 2, 3], 4);
    const end = slots([3, 1, 2], 4);
    const mid = stepFrame(was, end, 0.5);
    expect(mid.has(3)).toBe(false);
    expect(mid.get(1)!.x).toBeGreaterThan(was.get(1)!.x);
    expect(mid.get(1)!.x).toBeLessThan(end.get(1)!.x);
  });
});
