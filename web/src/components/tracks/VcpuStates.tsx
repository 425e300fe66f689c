// The vCPU state lanes (lib/vcpuStates): a lane per vCPU saying what it did: running in its domain's colour,
// spinning in orange, runnable as a thin bar (queued for a pCPU), blocked left empty, each wake-up a tick with a
// line to the dispatch that followed. At a zoom too dense for spans, each vCPU's share of each state per pixel
// column, stacked. A domain with many vCPUs shows its first few and a "+k more" row that unfolds it.
import type { ReactNode } from 'react';
import type { DetailWindow, Meta } from '../../sim/types';
import { fmt } from '../../lib/format';
import {
  BLOCKED,
  RUNNABLE,
  SPINNING,
  STATE_COLS,
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
  splitStates,
  stackColumn,
  stateAt,
  wakeMarks,
  type LaneRow,
  type StateLane,
  type StateShares,
  type WakeMark,
} from '../../lib/vcpuStates';
import type { Fill, TrackKind } from './track';

/** Height of a vCPU's state lane and the gap under it [px]; in presentation mode tall enough for its label at the
 * mode's 18 px type (fewer lanes fit: the timeline grows). */
const STATE_H = 10;
const STATE_GAP = 2;
const STATE_H_PRESENTING = 18;
const STATE_GAP_PRESENTING = 1;
/** More rows than this do not fit a lesson's screen at the labelled height: presentation then draws them thin,
 * labelled a domain at a time: its name where its lanes are a line high, and their short names below where they
 * are two. Domains of one lane each share a label where their names run in a row (cpu, 1–7); another domain's lone
 * lane is too thin for a label and is named by its colour (the legend's key above). */
const LABELLED_ROWS_PRESENTING = 6;
/** A thin lane's height [px]: at most this, and less where more lanes would take more room than six labelled ones
 * (so the timeline stays on a lesson's screen), but not under the least. */
const STATE_H_THIN = 8;
const STATE_H_THIN_LEAST = 4;
/** Presentation's type size [px]: a thin group's label takes a second line only with room for it. */
const LABEL_PX_PRESENTING = 18;
/** A domain with more vCPUs shows its first ones and a "+k more" row (clicking it unfolds the domain). */
const STATES_PER_DOMAIN = 4;
/** Most state spans asked for per window; beyond it the lanes draw the aggregate. */
const STATE_LIMIT = 40_000;
/** Spinning: burnt CPU, in one colour whatever the domain (a warning orange readable on both themes). */
export const SPIN_COLOR = '#e8590c';

interface States {
  /** Each vCPU's spans with their wake-ups; null when cut short (`full`). */
  readonly lanes: readonly { readonly lane: StateLane; readonly wakes: readonly WakeMark[] }[] | null;
  readonly full: boolean;
  /** The aggregate drawn instead when the spans are cut short. */
  readonly shares: StateShares | null;
}

/** Draws a vCPU's lane at `y`, `h` high, x from time by `sx` over `w` px. */
function drawLane(
  { lane, wakes }: { lane: StateLane; wakes: readonly WakeMark[] },
  y: number,
  h: number,
  color: string,
  tick: string,
  sx: (t: number) => number,
  w: number,
  fill: Fill,
): void {
  let painted = -1;
  for (let i = 0; i < lane.state.length; i++) {
    const s = lane.state[i]!;
    if (s === BLOCKED) continue;
    const x0 = sx(lane.start[i]!);
    const x1 = sx(lane.end[i]!);
    if (x1 <= 0 || x0 >= w) continue;
    // A sliver inside a pixel already painted adds nothing visible (a zoomed-out lane of thousands of spans).
    if (x1 - x0 < 1 && x1 <= painted) continue;
    painted = Math.ceil(x1);
    const width = Math.max(0.75, x1 - x0);
    if (s === RUNNABLE) fill(x0, y + h * 0.3, width, Math.max(2, h * 0.4), color, 0.7);
    else fill(x0, y, width, h, s === SPINNING ? SPIN_COLOR : color);
  }
  for (const { wake, run } of wakes) {
    const a = sx(wake);
    const b = sx(run);
    if (b < 0 || a > w) continue;
    fill(a - 0.5, y, 1, h, tick);
    if (b - a >= 1) fill(a, y, b - a, 1, tick);
  }
}

function vcpuName(meta: Meta, v: number): string {
  return meta.vcpus[v]?.name ?? `vCPU ${v}`;
}

/** A vCPU's name without its domain's ("web.v1" -> "v1"): the lane's colour says the domain. */
function shortName(meta: Meta, v: number): string {
  const name = vcpuName(meta, v);
  const dot = name.lastIndexOf('.');
  return dot >= 0 && dot < name.length - 1 ? name.slice(dot + 1) : name;
}

/** What a "+k more" row says. */
function moreText(meta: Meta, row: Extract<LaneRow, { kind: 'more' }>): string {
  return `${meta.domains[row.domain]?.name ?? '?'}: ${row.hidden} more vCPU${row.hidden === 1 ? '' : 's'}`;
}

export const vcpuStates: TrackKind<States> = {
  id: 'vcpu-states',
  title: 'vCPU state lanes',
  make: ({ run, meta, client, busy, theme, presenting, unfolded, unfold }) => {
    const rows = foldLanes(meta, STATES_PER_DOMAIN, unfolded);
    const thin = presenting && rows.length > LABELLED_ROWS_PRESENTING;
    const thinH = Math.floor(
      (LABELLED_ROWS_PRESENTING * (STATE_H_PRESENTING + STATE_GAP_PRESENTING)) / Math.max(1, rows.length) -
        STATE_GAP_PRESENTING,
    );
    const h = thin
      ? Math.max(STATE_H_THIN_LEAST, Math.min(STATE_H_THIN, thinH))
      : presenting
        ? STATE_H_PRESENTING
        : STATE_H;
    const step = h + (presenting ? STATE_GAP_PRESENTING : STATE_GAP);
    const nv = meta.vcpus.length;
    const domainName = (d: number) => meta.domains[d]?.name ?? '?';
    const groups = thin ? groupLanes(meta, rows) : [];
    const labels: ReactNode[] = thin
      ? laneLabels(groups, domainName).map(({ first, rows: n, domains }) => {
          const height = n * step - (step - h);
          // One domain's lanes, or lone-lane domains numbered in a row (cpu1..cpu7), named top to bottom.
          const g = domains.length === 1 ? groups.find((x) => x.first === first) : undefined;
          const names = g ? g.vcpus.map((v) => vcpuName(meta, v)) : domains.map(domainName);
          const more = g && g.hidden > 0 ? ` and ${g.hidden} more` : '';
          // Two short lines: the domain and its lanes (job, v0–3), or the run's name and numbers (cpu, 1–7).
          const lines = g
            ? [
                domainName(g.domain),
                laneRange(
                  g.vcpus.map((v) => shortName(meta, v)),
                  g.hidden,
                ),
              ]
            : runName(names);
          return (
            <div
              key={first}
              className="state-label state-group"
              data-testid="state-group-label"
              style={{ height, marginBottom: step - h }}
              title={`${names.join(', ')}${more}: their states, top to bottom`}
            >
              {height >= LABEL_PX_PRESENTING - 2 && <span>{lines[0]}</span>}
              {height >= 2 * LABEL_PX_PRESENTING - 2 && <span className="state-group-lanes">{lines[1]}</span>}
            </div>
          );
        })
      : rows.map((row, r) => (
          <div key={r} className="state-label" style={{ height: h, marginBottom: step - h }}>
            {row.kind === 'vcpu' ? (
              <span title={`${vcpuName(meta, row.vcpu)}: its states`}>
                {/* Presentation mode's large type fits only the short form (styles.css), as the pCPU lanes'. */}
                <span className="lane-long">{vcpuName(meta, row.vcpu)}</span>
                <span className="lane-short" aria-hidden="true">
                  {shortName(meta, row.vcpu)}
                </span>
              </span>
            ) : (
              <button
                type="button"
                className="state-more"
                data-testid="state-lanes-more"
                title={`${moreText(meta, row)}: show them`}
                onClick={() => unfold(row.domain)}
              >
                +{row.hidden}
                <span className="lane-long"> more</span>
              </button>
            )}
          </div>
        ));
    return {
      height: rows.length * step,
      update: async (window: DetailWindow, resolution: number) => {
        const flat = await client.query(run.runId, 'vcpuStates', window, STATE_LIMIT);
        const full = flat.length >= STATE_LIMIT * STATE_COLS;
        if (!full) {
          const lanes = splitStates(flat, nv).map((lane) => ({ lane, wakes: wakeMarks(lane) }));
          return { lanes, full, shares: null };
        }
        const shares = await client.query(run.runId, 'vcpuStateShares', window, shareBuckets(resolution, nv));
        const buckets = Math.floor(shares.length / (STATE_COLS * Math.max(1, nv)));
        return {
          lanes: null,
          full,
          shares: { shares, buckets, fromMs: window.from_ns / 1e6, toMs: window.to_ns / 1e6 },
        };
      },
      render: ({ sx, width, fill }, data) => {
        // Every row's aggregate columns fall at the same x: placed once, as (column, x, width).
        const placed: number[] = [];
        const agg = data.lanes ? null : data.shares;
        for (let k = 0; agg && k < agg.buckets; k++) {
          const [a, b] = columnSpan(agg, k);
          const x0 = sx(a);
          const x1 = sx(b);
          if (x1 > 0 && x0 < width) placed.push(k, x0, Math.max(0.75, x1 - x0));
        }
        rows.forEach((row, r) => {
          if (row.kind !== 'vcpu') return;
          const y = r * step;
          const color = busy[row.vcpu] ?? '#888';
          const lane = data.lanes?.[row.vcpu];
          if (lane) {
            fill(0, y, width, h, theme.empty);
            drawLane(lane, y, h, color, theme.fg, sx, width, fill);
            return;
          }
          if (!agg) return;
          fill(0, y, width, h, theme.empty);
          for (let i = 0; i < placed.length; i += 3)
            for (const bar of stackColumn(agg, row.vcpu, placed[i]!, y, h))
              fill(
                placed[i + 1]!,
                bar.y,
                placed[i + 2]!,
                bar.h,
                bar.state === SPINNING ? SPIN_COLOR : color,
                bar.state === RUNNABLE ? 0.35 : 1,
              );
        });
      },
      hover: ({ t, slack, y }, data) => {
        const r = Math.floor(y / step);
        const row = rows[r];
        if (!row || y - r * step > h) return null;
        if (row.kind === 'more') return [moreText(meta, row), 'click its label to show them'];
        const name = vcpuName(meta, row.vcpu);
        const lane = data?.lanes?.[row.vcpu]?.lane;
        if (!lane && data?.shares) {
          const k = columnAt(data.shares, t);
          return k < 0 ? null : describeShares(name, data.shares, row.vcpu, k);
        }
        if (!lane) return [name, data?.full ? 'too many states here: zoom in' : 'no states yet'];
        const i = stateAt(lane, t);
        if (i < 0) return null;
        const lines = describeSpan(name, lane, i);
        const wake = data?.lanes?.[row.vcpu]?.wakes.find((m) => m.wake - slack <= t && t <= m.run + slack);
        if (wake)
          lines.push(
            wake.run > wake.wake
              ? `woken at ${fmt(wake.wake, 6)} ms, ran ${fmt(wake.run - wake.wake)} ms later`
              : `woken at ${fmt(wake.wake, 6)} ms and ran at once`,
          );
        return lines;
      },
      attrs: (data) => {
        const drawn = rows.filter((row) => row.kind === 'vcpu');
        return {
          'data-state-lanes': data?.lanes ? drawn.filter((row) => data.lanes![row.vcpu]).length : 0,
          'data-state-aggregate': data && !data.lanes && data.shares ? drawn.length : 0,
        };
      },
      zoom: (data) => ({
        aggregated: data !== null && !data.lanes && data.shares !== null,
        full: data?.full ?? false,
      }),
      labels,
    };
  },
};
