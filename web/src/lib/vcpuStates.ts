// The per-vCPU state lanes under the Gantt: what each vCPU did (running, spinning at a barrier,
// runnable in a queue, blocked) as SchedViz and Perfetto draw thread states, with a wake-to-run mark from each
// wake-up to the dispatch that followed. The simulator hands the states as flat rows (worker query `vcpuStates`);
// these pure helpers split them per vCPU, find the wake-ups, and fold domains with many vCPUs.
import { bisectRight } from 'd3-array';
import type { Meta } from '../sim/types';
import { fmt } from './format';

/** Columns of one row of the `vcpuStates` query: vcpu, start_ns, end_ns, state code. */
export const STATE_COLS = 4;

/** The state codes' names, by code (the simulator's `VcpuState`). */
export const STATE_NAMES = ['running', 'spinning', 'runnable', 'blocked'] as const;
export type VcpuStateName = (typeof STATE_NAMES)[number];
export const RUNNING = 0;
export const SPINNING = 1;
export const RUNNABLE = 2;
export const BLOCKED = 3;

/** One vCPU's spans in time order [ms], contiguous. */
export interface StateLane {
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly state: Uint8Array;
}

const EMPTY: StateLane = { start: new Float64Array(0), end: new Float64Array(0), state: new Uint8Array(0) };

/** Splits the query's rows into one lane per vCPU (`nvcpus` lanes; a vCPU with no rows gets an empty one). */
export function splitStates(flat: Float64Array, nvcpus: number): StateLane[] {
  const rows = Math.floor(flat.length / STATE_COLS);
  const counts = new Array<number>(nvcpus).fill(0);
  for (let r = 0; r < rows; r++) {
    const v = flat[r * STATE_COLS]!;
    if (v >= 0 && v < nvcpus) counts[v]!++;
  }
  const lanes = counts.map((n) =>
    n === 0 ? EMPTY : { start: new Float64Array(n), end: new Float64Array(n), state: new Uint8Array(n) },
  );
  const fill = new Array<number>(nvcpus).fill(0);
  // The rows come by vCPU then time: each lane fills in order.
  for (let r = 0; r < rows; r++) {
    const o = r * STATE_COLS;
    const v = flat[o]!;
    const lane = lanes[v];
    if (!lane) continue;
    const i = fill[v]!++;
    (lane.start as Float64Array)[i] = flat[o + 1]! / 1e6;
    (lane.end as Float64Array)[i] = flat[o + 2]! / 1e6;
    (lane.state as Uint8Array)[i] = flat[o + 3]!;
  }
  return lanes;
}

/** Index of the span covering time `t` [ms], or -1. */
export function stateAt(lane: StateLane, t: number): number {
  const i = bisectRight(lane.end, t);
  return i < lane.start.length && lane.start[i]! <= t ? i : -1;
}

/** A wake-up and the dispatch that followed [ms] (equal when the vCPU ran at once). */
export interface WakeMark {
  readonly wake: number;
  readonly run: number;
}

/** Each blocked -> (runnable ->) running or spinning transition of a lane: the wake-to-run latencies. */
export function wakeMarks(lane: StateLane): WakeMark[] {
  const out: WakeMark[] = [];
  const n = lane.state.length;
  for (let i = 1; i < n; i++) {
    if (lane.state[i - 1] !== BLOCKED) continue;
    const s = lane.state[i];
    if (s === RUNNING || s === SPINNING) out.push({ wake: lane.start[i]!, run: lane.start[i]! });
    else if (s === RUNNABLE && i + 1 < n && lane.state[i + 1]! <= SPINNING)
      out.push({ wake: lane.start[i]!, run: lane.end[i]! });
  }
  return out;
}

/** A row of the state lanes: one vCPU's lane, or the "+k more" row of a folded domain. */
export type LaneRow =
  | { readonly kind: 'vcpu'; readonly vcpu: number }
  | { readonly kind: 'more'; readonly domain: number; readonly hidden: number };

/**
 * The rows shown, domain by domain: each domain's first `perDomain` vCPUs, then a "+k more" row for the rest
 * unless the domain is in `expanded`.
 */
export function foldLanes(meta: Meta, perDomain: number, expanded: ReadonlySet<number>): LaneRow[] {
  const byDomain = new Map<number, number[]>();
  meta.vcpus.forEach((v, i) => {
    const list = byDomain.get(v.domain) ?? [];
    list.push(i);
    byDomain.set(v.domain, list);
  });
  const out: LaneRow[] = [];
  for (const [domain, vcpus] of [...byDomain].sort((a, b) => a[0] - b[0])) {
    const shown = expanded.has(domain) ? vcpus : vcpus.slice(0, perDomain);
    for (const vcpu of shown) out.push({ kind: 'vcpu', vcpu });
    if (shown.length < vcpus.length) out.push({ kind: 'more', domain, hidden: vcpus.length - shown.length });
  }
  return out;
}

/** A run of consecutive rows of one domain (`foldLanes` order): labelled as one where lanes are too thin for one each. */
export interface LaneGroup {
  readonly domain: number;
  /** Its first row's index and how many rows it spans (its "+k more" row included). */
  readonly first: number;
  readonly rows: number;
  /** The vCPUs its lanes show, top to bottom. */
  readonly vcpus: readonly number[];
  /** vCPUs folded into its "+k more" row. */
  readonly hidden: number;
}

/** The rows of `foldLanes` grouped by domain. */
export function groupLanes(meta: Meta, rows: readonly LaneRow[]): LaneGroup[] {
  const out: { domain: number; first: number; rows: number; vcpus: number[]; hidden: number }[] = [];
  rows.forEach((row, r) => {
    const domain = row.kind === 'vcpu' ? (meta.vcpus[row.vcpu]?.domain ?? -1) : row.domain;
    let g = out[out.length - 1];
    if (!g || g.domain !== domain) {
      g = { domain, first: r, rows: 0, vcpus: [], hidden: 0 };
      out.push(g);
    }
    g.rows += 1;
    if (row.kind === 'vcpu') g.vcpus.push(row.vcpu);
    else g.hidden += row.hidden;
  });
  return out;
}

/**
 * The labels of thin lanes, top to bottom: each domain's group, except that domains of one lane each whose names
 * run in a row (cpu1, cpu2, ... cpu7) share one label spanning their lanes. `domains` lists the domains labelled.
 */
export function laneLabels(
  groups: readonly LaneGroup[],
  name: (domain: number) => string,
): { readonly first: number; readonly rows: number; readonly domains: readonly number[] }[] {
  const out: { first: number; rows: number; domains: number[] }[] = [];
  const numbered = (d: number) => /^(\D*)(\d+)$/.exec(name(d));
  for (const g of groups) {
    const last = out[out.length - 1];
    const prev =
      last && last.rows === last.domains.length ? numbered(last.domains[last.domains.length - 1]!) : null;
    const here = g.rows === 1 ? numbered(g.domain) : null;
    if (prev && here && prev[1] === here[1] && Number(here[2]) === Number(prev[2]) + 1) {
      last!.rows += 1;
      last!.domains.push(g.domain);
    } else out.push({ first: g.first, rows: g.rows, domains: [g.domain] });
  }
  return out;
}

/** A `laneLabels` run of domains numbered in a row in two short lines: ["cpu", "1–7"] for cpu1..cpu7. */
export function runName(names: readonly string[]): [string, string] {
  const first = /^(\D*)(\d+)$/.exec(names[0] ?? '');
  const last = /^(\D*)(\d+)$/.exec(names[names.length - 1] ?? '');
  if (!first || !last) return [names.join(', '), ''];
  return [first[1]!, names.length > 1 ? `${first[2]}–${last[2]}` : first[2]!];
}

/**
 * The lanes of a group in a few characters, top to bottom: "v0–3" for vCPUs named v0..v3 in a row (the part of
 * each name after its domain's), else the first and last names; "+k" for folded ones.
 */
export function laneRange(short: readonly string[], hidden = 0): string {
  const more = hidden > 0 ? ` +${hidden}` : '';
  if (short.length <= 1) return `${short[0] ?? ''}${more}`.trim();
  const parsed = short.map((s) => /^(\D*)(\d+)$/.exec(s));
  const prefix = parsed[0]?.[1];
  const run = parsed.every((m, i) => m && m[1] === prefix && Number(m[2]) === Number(parsed[0]![2]) + i);
  const first = short[0]!;
  const last = short[short.length - 1]!;
  return `${run ? `${first}–${parsed[parsed.length - 1]![2]}` : `${first}–${last}`}${more}`;
}

/** What a span's hover says: the vCPU, its state and how long. */
export function describeSpan(name: string, lane: StateLane, i: number): string[] {
  const state = STATE_NAMES[lane.state[i]!] ?? '?';
  const from = lane.start[i]!;
  const to = lane.end[i]!;
  const what: Record<VcpuStateName, string> = {
    running: 'running on a pCPU',
    spinning: 'spinning at a barrier (a sibling is not running)',
    runnable: 'runnable, waiting in a run queue',
    blocked: 'blocked (nothing to run until a wake-up)',
  };
  return [
    `${name}: ${what[state as VcpuStateName] ?? state}`,
    `${fmt(from, 6)} – ${fmt(to, 6)} ms (${fmt(to - from)} ms)`,
  ];
}

/**
 * The state lanes at a zoom too dense for spans (worker query `vcpuStateShares`): [fromMs, toMs) cut into
 * `buckets` equal columns, and each vCPU's share of each column's time per state code, at
 * `(vcpu * buckets + column) * 4 + state`.
 */
export interface StateShares {
  readonly shares: Float64Array;
  readonly buckets: number;
  /** [ms] */
  readonly fromMs: number;
  /** [ms] */
  readonly toMs: number;
}

/** Most numbers an aggregate may hold (vCPUs x columns x states): 8 MB of doubles, whatever the host. */
const SHARE_CELLS = 1 << 20;

/** Columns to ask for: one per pixel of `px`, fewer when `nvcpus` lanes of them would pass SHARE_CELLS. */
export function shareBuckets(px: number, nvcpus: number): number {
  const cap = Math.floor(SHARE_CELLS / (Math.max(1, nvcpus) * STATE_COLS));
  return Math.max(1, Math.min(Math.round(px), cap));
}

/** The column holding time `t` [ms], or -1 outside [fromMs, toMs). */
export function columnAt(a: Pick<StateShares, 'buckets' | 'fromMs' | 'toMs'>, t: number): number {
  if (!(t >= a.fromMs && t < a.toMs)) return -1;
  return Math.min(a.buckets - 1, Math.floor(((t - a.fromMs) / (a.toMs - a.fromMs)) * a.buckets));
}

/** A column's time span [ms]. */
export function columnSpan(
  a: Pick<StateShares, 'buckets' | 'fromMs' | 'toMs'>,
  column: number,
): [number, number] {
  const w = (a.toMs - a.fromMs) / a.buckets;
  return [a.fromMs + column * w, a.fromMs + (column + 1) * w];
}

/** One vCPU's shares of a column, by state code. */
export function sharesAt(a: StateShares, vcpu: number, column: number): number[] {
  const o = (vcpu * a.buckets + column) * STATE_COLS;
  return Array.from({ length: STATE_COLS }, (_, s) => a.shares[o + s] ?? 0);
}

/** What a column of an aggregated lane draws, bottom up in a lane `h` px high from `y`: running, spinning and
 * runnable as bars as tall as their shares (blocked, and time without detail, left empty). */
export function stackColumn(
  a: StateShares,
  vcpu: number,
  column: number,
  y: number,
  h: number,
): { state: number; y: number; h: number }[] {
  const out: { state: number; y: number; h: number }[] = [];
  const o = (vcpu * a.buckets + column) * STATE_COLS;
  let bottom = y + h;
  for (const state of [RUNNING, SPINNING, RUNNABLE]) {
    const bh = (a.shares[o + state] ?? 0) * h;
    if (bh <= 0) continue;
    bottom -= bh;
    out.push({ state, y: bottom, h: bh });
  }
  return out;
}

/** What an aggregated column's hover says: the vCPU, the column's span and its share of each state. */
export function describeShares(name: string, a: StateShares, vcpu: number, column: number): string[] {
  const [from, to] = columnSpan(a, column);
  const shares = sharesAt(a, vcpu, column);
  const parts = STATE_NAMES.flatMap((n, s) =>
    (shares[s] ?? 0) > 0 ? [`${n} ${Math.round((shares[s] ?? 0) * 100)}%`] : [],
  );
  return [
    `${name}, ${fmt(from, 6)} – ${fmt(to, 6)} ms`,
    parts.length > 0 ? parts.join(', ') : 'no detail here',
    'aggregated at this zoom: zoom in for the spans',
  ];
}
