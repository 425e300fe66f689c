import { describe, expect, it } from 'vitest';
import type { Meta } from '../sim/types';
import {
  BLOCKED,
  RUNNABLE,
  RUNNING,
  SPINNING,
  columnAt,
  columnSpan,
  describeShares,
  describeSpan,
  foldLanes,
  groupLanes,
  laneLabels,
  laneRange,
  runName,
  shareBuckets,
  sharesAt,
  stackColumn,
  splitStates,
  stateAt,
  wakeMarks,
} from './vcpuStates';

const ms = 1e6;
/** One domain with one vCPU, one with three. */
const meta = {
  vcpus: [
    { name: 'a.v0', domain: 0 },
    { name: 'b.v0', domain: 1 },
    { name: 'b.v1', domain: 1 },
    { name: 'b.v2', domain: 1 },
  ],
} as unknown as Meta;

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

describe('state lanes too thin for a label each', () => {
  it('groups the rows by domain, the "+k more" row with its domain', () => {
    expect(groupLanes(meta, foldLanes(meta, 2, new Set()))).toEqual([
      { domain: 0, first: 0, rows: 1, vcpus: [0], hidden: 0 },
      { domain: 1, first: 1, rows: 3, vcpus: [1, 2], hidden: 1 },
    ]);
  });

  it('labels lone-lane domains numbered in a row together', () => {
    const names = ['dom0', 'media', 'cpu1', 'cpu2', 'cpu3', 'web', 'cpu5'];
    const lone = names.map((_, d) => ({ domain: d, first: d, rows: 1, vcpus: [d], hidden: 0 }));
    expect(laneLabels(lone, (d) => names[d]!)).toEqual([
      { first: 0, rows: 1, domains: [0] },
      { first: 1, rows: 1, domains: [1] },
      { first: 2, rows: 3, domains: [2, 3, 4] },
      { first: 5, rows: 1, domains: [5] },
      { first: 6, rows: 1, domains: [6] },
    ]);
    // A domain of several lanes keeps its own label, even numbered in a row.
    const groups = [
      { domain: 0, first: 0, rows: 1, vcpus: [0], hidden: 0 },
      { domain: 1, first: 1, rows: 2, vcpus: [1, 2], hidden: 0 },
    ];
    expect(laneLabels(groups, (d) => `bg${d + 1}`)).toEqual([
      { first: 0, rows: 1, domains: [0] },
      { first: 1, rows: 2, domains: [1] },
    ]);
    expect(runName(['cpu1', 'cpu2', 'cpu3'])).toEqual(['cpu', '1–3']);
  });

  it("names a group's lanes in a few characters", () => {
    expect(laneRange(['v0', 'v1', 'v2', 'v3'])).toBe('v0–3');
    expect(laneRange(['v0', 'v1'], 3)).toBe('v0–1 +3');
    expect(laneRange(['v0', 'v2'])).toBe('v0–v2');
    expect(laneRange(['io', 'cpu'])).toBe('io–cpu');
    expect(laneRange(['v4'])).toBe('v4');
    expect(laneRange([], 2)).toBe('+2');
  });
});

describe('aggregated state lanes (a window too dense for spans)', () => {
  // Two vCPUs over [100, 104) ms in 4 columns of 1 ms, shares by [running, spinning, runnable, blocked]:
  // vCPU 0 runs, then half runs half queues, then blocks, then has no detail; vCPU 1 spins a quarter of column 0.
  const cols = [
    [1, 0, 0, 0],
    [0.5, 0, 0.5, 0],
    [0, 0, 0, 1],
    [0, 0, 0, 0],
    [0.5, 0.25, 0, 0.25],
    [0, 0, 0, 1],
    [0, 0, 0, 1],
    [0, 0, 0, 1],
  ];
  const agg = { shares: new Float64Array(cols.flat()), buckets: 4, fromMs: 100, toMs: 104 };

  it('finds the column of a time and its span', () => {
    expect(columnAt(agg, 100)).toBe(0);
    expect(columnAt(agg, 101.5)).toBe(1);
    expect(columnAt(agg, 103.999)).toBe(3);
    expect(columnAt(agg, 104)).toBe(-1);
    expect(columnAt(agg, 99)).toBe(-1);
    expect(columnSpan(agg, 2)).toEqual([102, 103]);
  });

  it('reads one vCPU column and stacks its bars bottom up by share', () => {
    expect(sharesAt(agg, 1, 0)).toEqual([0.5, 0.25, 0, 0.25]);
    // A lane 8 px high at y = 10: running 4 px at the bottom, spinning 2 px above it, blocked left empty.
    expect(stackColumn(agg, 1, 0, 10, 8)).toEqual([
      { state: RUNNING, y: 14, h: 4 },
      { state: SPINNING, y: 12, h: 2 },
    ]);
    expect(stackColumn(agg, 0, 1, 0, 10)).toEqual([
      { state: RUNNING, y: 5, h: 5 },
      { state: RUNNABLE, y: 0, h: 5 },
    ]);
    expect(stackColumn(agg, 0, 2, 0, 10)).toEqual([]);
  });

  it('says what a column holds, and that it is aggregated', () => {
    expect(describeShares('web.v0', agg, 0, 1)).toEqual([
      'web.v0, 101 – 102 ms',
      'running 50%, runnable 50%',
      'aggregated at this zoom: zoom in for the spans',
    ]);
    expect(describeShares('web.v0', agg, 0, 3)[1]).toBe('no detail here');
  });

  it('asks for a column per pixel, fewer when many vCPUs would make the answer large', () => {
    expect(shareBuckets(2400.4, 8)).toBe(2400);
    expect(shareBuckets(2400, 1024)).toBe(256);
    expect(shareBuckets(0, 4)).toBe(1);
  });
});
