import { describe, expect, it } from 'vitest';
import type { RunQueueEntry } from '../sim/types';
import { queueRow, rowKey, type QueueRow } from './runqueueLayout';
import { decompose, planSteps, trimBacklog, type RunQueueChange } from './runqueueSteps';

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
