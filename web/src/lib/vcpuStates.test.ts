import { describe, expect, it } from 'vitest';
import type { Meta } from '../sim/types';
import {
  BLOCKED,
  RUNNABLE,
  RUNNING,
  SPINNING,
  describeSpan,
  foldLanes,
  splitStates,
  stateAt,
  wakeMarks,
} from './vcpuStates';

const ms = 1e6;

describe('state lanes', () => {
  // vCPU 0: blocked, woken and queued 2 ms, ran, blocked, woken straight onto a pCPU; vCPU 1 spins then runs.
  const flat = new Float64Array(
    [
      [0, 0, 10, BLOCKED],
      [0, 10, 12, RUNNABLE],
      [0, 12, 20, RUNNING],
      [0, 20, 30, BLOCKED],
      [0, 30, 40, RUNNING],
      [1, 0, 5, SPINNING],
      [1, 5, 40, RUNNING],
    ].flatMap(([v, a, b, s]) => [v!, a! * ms, b! * ms, s!]),
  );

  it('splits the rows per vCPU in ms, and finds the span at a time', () => {
    const lanes = splitStates(flat, 3);
    expect(lanes.map((l) => l.state.length)).toEqual([5, 2, 0]);
    expect([...lanes[0]!.start]).toEqual([0, 10, 12, 20, 30]);
    expect(stateAt(lanes[0]!, 11)).toBe(1);
    expect(stateAt(lanes[0]!, 12)).toBe(2);
    expect(stateAt(lanes[2]!, 1)).toBe(-1);
    expect(describeSpan('job.v0', lanes[0]!, 1)).toEqual([
      'job.v0: runnable, waiting in a run queue',
      '10 – 12 ms (2 ms)',
    ]);
  });

  it('marks each wake-up with the dispatch that followed', () => {
    const lanes = splitStates(flat, 2);
    expect(wakeMarks(lanes[0]!)).toEqual([
      { wake: 10, run: 12 },
      { wake: 30, run: 30 },
    ]);
    // Spinning then running is no wake-up.
    expect(wakeMarks(lanes[1]!)).toEqual([]);
  });

  it('folds a domain with many vCPUs to its first ones and a "+k more" row, unless expanded', () => {
    const meta = {
      vcpus: [
        { name: 'a.v0', domain: 0 },
        { name: 'b.v0', domain: 1 },
        { name: 'b.v1', domain: 1 },
        { name: 'b.v2', domain: 1 },
      ],
    } as unknown as Meta;
    expect(foldLanes(meta, 2, new Set())).toEqual([
      { kind: 'vcpu', vcpu: 0 },
      { kind: 'vcpu', vcpu: 1 },
      { kind: 'vcpu', vcpu: 2 },
      { kind: 'more', domain: 1, hidden: 1 },
    ]);
    expect(foldLanes(meta, 2, new Set([1])).map((r) => (r.kind === 'vcpu' ? r.vcpu : -1))).toEqual([
      0, 1, 2, 3,
    ]);
  });
});
