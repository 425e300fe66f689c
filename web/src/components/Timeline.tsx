// Gantt chart of one run: a lane per pCPU, a rectangle per schedule segment coloured by domain. Segments, the
// time axis and the playhead share one canvas (a run has tens of thousands of segments, and a playing window
// moves the axis every frame), which playback draws straight from the Playhead store: a frame costs no React
// render and changes nothing in the DOM. Legend, lane labels and tooltip stay React-owned HTML. d3-zoom only
// listens for gestures and reports the new time window, which the page shares with every column. Under the
// pCPU lanes and the I/O strip, a state lane per vCPU (lib/vcpuStates) says what each vCPU did meanwhile.
import {
  memo,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type PointerEvent,
  type ReactNode,
} from 'react';
import { scaleLinear } from 'd3-scale';
import { select } from 'd3-selection';
import { zoom, zoomIdentity, type D3ZoomEvent, type ZoomBehavior } from 'd3-zoom';
import type { SimClient } from '../sim/client';
import type { IoRec, Meta, RunResult } from '../sim/types';
import { useWindowDetail } from '../app/useWindowDetail';
import { PresentingContext, useDomainColor } from '../lib/theme';
import { withAlpha } from '../lib/color';
import { segmentAt, visibleRange, type Lane } from '../lib/series';
import { anchor, fmt } from '../lib/format';
import { useVisible } from '../lib/useVisible';
import { fontFamily, useCanvasColors } from '../lib/canvasColors';
import { useWidth } from '../lib/useWidth';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import type { View } from '../lib/view';
import { usePlayhead, usePlayheadEffect, type Playhead, type PlayheadState } from '../lib/playhead';
import { Tooltip, type Hover } from './Tooltip';
import { esc, rect, registerVector } from '../lib/svgExport';
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
  shareBuckets,
  splitStates,
  stackColumn,
  stateAt,
  wakeMarks,
  type LaneRow,
  type StateLane,
  type StateShares,
  type WakeMark,
} from '../lib/vcpuStates';

const LANE_GAP = 4;

/** The state lanes' legend: each item's mark (its class), and its text in a wide and in a narrow column. */
const STATE_LEGEND = [
  { mark: 'swatch running', long: 'running', short: 'run' },
  { mark: 'swatch spin', long: 'spinning', short: 'spin' },
  { mark: 'swatch runnable', long: 'runnable', short: 'queued' },
  { mark: 'wake-tick', long: 'wake → run; blank: blocked', short: 'wake' },
] as const;
/** Beyond this many domains colours repeat and the legend would crowd out the chart; hovering names them. */
const LEGEND_MAX = 16;

/** Lane height [px]: roomy for a few pCPUs, compact for many. */
function laneHeight(pcpus: number): number {
  return pcpus <= 2 ? 28 : pcpus <= 8 ? 20 : 12;
}
const AXIS_H = 18;
const PAD_TOP = 4;
/** Narrowest window the zoom allows [ms]. */
const MIN_WINDOW_MS = 0.05;
/** Height of the I/O strip under the lanes: one bar per event-channel notification from pending to delivered. */
const IO_H = 12;
/** Most notifications the strip asks for per window; beyond it the strip says to zoom in. */
const IO_LIMIT = 4000;
/** Opacity of the guest idle loop: the vCPU holds the pCPU but does no work. */
const IDLE_ALPHA = 0.3;
/** Height of a vCPU's state lane and the gap under it [px]: labelled lanes, or in presentation mode (where the
 * labels give way to large type and the lesson's view must still fit the screen) thinner unlabelled ones. */
const STATE_H = 10;
const STATE_GAP = 2;
const STATE_H_PRESENTING = 6;
const STATE_GAP_PRESENTING = 1;
/** A domain with more vCPUs shows its first ones and a "+k more" row (clicking it unfolds the domain). */
const STATES_PER_DOMAIN = 4;
/** Most state spans the lanes ask for per window; beyond it they say to zoom in. */
const STATE_LIMIT = 40_000;
/** Spinning: burnt CPU, in one colour whatever the domain (a warning orange readable on both themes). */
const SPIN_COLOR = '#e8590c';

/** A vCPU's state lane where it is drawn: its spans and wake-ups, at `y` [px]. */
interface StateRow {
  readonly vcpu: number;
  readonly y: number;
  /** [px] */
  readonly h: number;
  readonly lane: StateLane;
  readonly wakes: readonly WakeMark[];
}

/**
 * Draws the state lanes into `out` (a canvas context or an SVG pen with the same three calls), x from time by
 * `sx`, `w` wide: running in the domain's colour, spinning in orange, runnable as a thin bar in the domain's
 * colour (waiting), blocked left empty; each wake-up as a tick with a line to its dispatch along the lane's top.
 */
function drawStates(
  rows: readonly StateRow[],
  sx: (t: number) => number,
  w: number,
  busy: readonly string[],
  empty: string,
  tick: string,
  fillRect: (x: number, y: number, w: number, h: number, color: string, alpha?: number) => void,
): void {
  for (const { vcpu, y, h, lane, wakes } of rows) {
    fillRect(0, y, w, h, empty);
    const color = busy[vcpu] ?? '#888';
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
      if (s === RUNNABLE) fillRect(x0, y + h * 0.3, width, Math.max(2, h * 0.4), color, 0.7);
      else fillRect(x0, y, width, h, s === SPINNING ? SPIN_COLOR : color);
    }
    for (const { wake, run } of wakes) {
      const a = sx(wake);
      const b = sx(run);
      if (b < 0 || a > w) continue;
      fillRect(a - 0.5, y, 1, h, tick);
      if (b - a >= 1) fillRect(a, y, b - a, 1, tick);
    }
  }
}

/** A state lane drawn from the aggregate (a window too dense for spans): its vCPU's row at `y` [px]. */
interface ShareRow {
  readonly vcpu: number;
  readonly y: number;
  /** [px] */
  readonly h: number;
}

/** Delivered notifications per column of [fromMs, toMs) (the I/O strip at a zoom too dense for a bar each). */
interface IoCounts {
  readonly counts: Uint32Array;
  readonly buckets: number;
  /** [ms] */
  readonly fromMs: number;
  /** [ms] */
  readonly toMs: number;
}

/**
 * Draws aggregated state lanes: per column, bars as tall as the vCPU's share of the column's time running (its
 * domain's colour), spinning (orange) and runnable (its colour, faint), stacked from the lane's bottom; blocked
 * left empty. Columns are a pixel or so wide, so this costs about rows x pixels rectangles per strip.
 */
function drawShares(
  rows: readonly ShareRow[],
  agg: StateShares,
  sx: (t: number) => number,
  w: number,
  busy: readonly string[],
  empty: string,
  fillRect: (x: number, y: number, w: number, h: number, color: string, alpha?: number) => void,
): void {
  // Every row's columns fall at the same x: placed once, as (column, x, width) for those on the strip.
  const placed: number[] = [];
  for (let k = 0; k < agg.buckets; k++) {
    const [a, b] = columnSpan(agg, k);
    const x0 = sx(a);
    const x1 = sx(b);
    if (x1 <= 0 || x0 >= w) continue;
    placed.push(k, x0, Math.max(0.75, x1 - x0));
  }
  for (const { vcpu, y, h } of rows) {
    fillRect(0, y, w, h, empty);
    const color = busy[vcpu] ?? '#888';
    for (let i = 0; i < placed.length; i += 3)
      for (const bar of stackColumn(agg, vcpu, placed[i]!, y, h))
        fillRect(
          placed[i + 1]!,
          bar.y,
          placed[i + 2]!,
          bar.h,
          bar.state === SPINNING ? SPIN_COLOR : color,
          bar.state === RUNNABLE ? 0.35 : 1,
        );
  }
}

/**
 * A `fillRect` with a colour and an opacity, for the drawing helpers above, that sets the context's fill style and
 * alpha only when they change (a canvas parses every colour it is given, and an aggregated strip is some 10^5
 * rectangles): the same drawing. Nothing else may set them on `ctx` while it is in use.
 */
function canvasFill(
  ctx: CanvasRenderingContext2D,
): (x: number, y: number, w: number, h: number, color: string, alpha?: number) => void {
  let style: string | null = null;
  let alpha = ctx.globalAlpha;
  return (x, y, w, h, color, a = 1) => {
    if (a !== alpha) {
      ctx.globalAlpha = a;
      alpha = a;
    }
    if (color !== style) {
      ctx.fillStyle = color;
      style = color;
    }
    ctx.fillRect(x, y, w, h);
  };
}

/** Draws the I/O strip's aggregate: per column a bar whose height grows with the log of its deliveries, against the
 * busiest column's (log: a burst must not flatten every other column to nothing; hovering gives the counts). */
function drawIoCounts(
  io: IoCounts,
  sx: (t: number) => number,
  w: number,
  top: number,
  color: string,
  fillRect: (x: number, y: number, w: number, h: number, color: string, alpha?: number) => void,
): void {
  const max = io.counts.reduce((m, c) => Math.max(m, c), 0);
  if (max === 0) return;
  for (let k = 0; k < io.buckets; k++) {
    const c = io.counts[k]!;
    if (c === 0) continue;
    const [a, b] = columnSpan(io, k);
    const x0 = sx(a);
    const x1 = sx(b);
    if (x1 <= 0 || x0 >= w) continue;
    const h = Math.max(1, ((IO_H - 2) * Math.log1p(c)) / Math.log1p(max));
    fillRect(x0, top + IO_H - 1 - h, Math.max(0.75, x1 - x0), h, color, 0.7);
  }
}

interface Props {
  /** The run drawn: the lanes of the window on screen come from its worker (app/useWindowDetail). */
  readonly run: RunResult;
  readonly durationMs: number;
  /** Playhead and visible time window, shared by all columns: this view follows them every frame. */
  readonly playhead: Playhead;
  readonly onViewChange: (view: View) => void;
  /** Where the run lives, for the detail of the visible window. */
  readonly client: SimClient;
}

/** The axis line and tick marks, and the playhead (as styles.css .axis-line and .playhead draw them in SVG). */
const AXIS_COLOR = '#888';
const PLAYHEAD_COLOR = '#c00';
const PLAYHEAD_W = 1.5;

/** Window widths the strip covers: the one before the view's grid cell, the cell and two after it. */
const STRIP_WIDTHS = 4;

/**
 * The window's cell on a grid of window widths: its width, rounded (a window that follows the playhead keeps its
 * width, but t1 - t0 jitters in the last bits), and `from`, one width before the cell the window starts in.
 * The strip and the I/O and state fetches cover [from, from + STRIP_WIDTHS * w]: a window that follows the
 * playhead moves to a new cell once per window width, not per frame.
 */
function gridOf([t0, t1]: View): { w: number; from: number } {
  const w = Number((t1 - t0).toPrecision(9));
  return { w, from: w > 0 ? (Math.floor(t0 / w) - 1) * w : 0 };
}

/** The strip's range for a grid cell ([from, from + STRIP_WIDTHS * w], ms) in whole nanoseconds, as the worker
 * is asked for it: one computation for the I/O strip and the state lanes, so both ask for the same window. */
function stripNs(from: number, w: number): [number, number] {
  return [Math.max(0, Math.round(from * 1e6)), Math.round((from + STRIP_WIDTHS * w) * 1e6)];
}
const selectGrid = (s: PlayheadState): string => {
  const { w, from } = gridOf(s.view);
  return `${w} ${from}`;
};

/** A delivered notification as a bar from when it became pending to when its vCPU ran [ms]. */
interface IoBar {
  readonly from: number;
  readonly to: number;
  readonly rec: IoRec;
}

export function Timeline({ run, durationMs, playhead, onViewChange, client }: Props) {
  const { meta, runId } = run;
  const domainColor = useDomainColor();
  // The lanes' empty background follows the page's theme (a canvas cannot read CSS variables).
  const theme = useCanvasColors();
  // Every frame while the chart is on screen (its legend above it may be while the chart is not); off screen
  // nothing until it scrolls back or playback stops.
  const figureRef = useRef<HTMLElement>(null);
  const plotRef = useRef<HTMLDivElement>(null);
  const visible = useVisible(plotRef);
  // A replay run's detail (issue 19): the window the lanes hold [ms], whether the view's is being replayed, and
  // the longest window the run replays [ms]. Undefined when the lanes hold the whole run.
  const { lanes, loading, held } = useWindowDetail(client, run, playhead, durationMs, visible);
  const capMs = run.detail ? run.detail.capNs / 1e6 : null;
  const detail = useMemo(
    () => (capMs === null ? undefined : { loading, held, capMs }),
    [capMs, loading, held],
  );
  // React hears of the window only when it moves to a new grid cell (the I/O and state fetches); the canvas
  // follows every frame.
  const [w, cellFrom] = usePlayhead(playhead, selectGrid, { visible }).split(' ').map(Number) as [
    number,
    number,
  ];
  const [stripFromNs, stripToNs] = stripNs(cellFrom, w);
  // A view wider than a replay run's longest window: the lanes show the window it holds, and the I/O strip and the
  // state lanes ask for that same window (the strip's range would replay another one, from the strip's start,
  // and the views would disagree about which stretch they show).
  const heldMs = detail && w > detail.capMs ? detail.held : null;
  const [askFromNs, askToNs] = heldMs
    ? [Math.ceil(heldMs[0] * 1e6), Math.floor(heldMs[1] * 1e6)]
    : [stripFromNs, stripToNs];
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const onViewChangeRef = useRef(onViewChange);
  const [hover, setHover] = useState<Hover | null>(null);
  const width = useWidth(plotRef);
  const LANE_H = laneHeight(meta.pcpus);
  const ioTop = meta.pcpus * (LANE_H + LANE_GAP) + PAD_TOP;
  const statesTop = ioTop + IO_H + LANE_GAP;
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(() => new Set());
  const stateRows = useMemo(() => foldLanes(meta, STATES_PER_DOMAIN, expanded), [meta, expanded]);
  const presenting = useContext(PresentingContext);
  const stateH = presenting ? STATE_H_PRESENTING : STATE_H;
  const stateStep = stateH + (presenting ? STATE_GAP_PRESENTING : STATE_GAP);
  const lanesH = statesTop + stateRows.length * stateStep + (stateRows.length > 0 ? LANE_GAP : 0);
  const height = lanesH + AXIS_H;

  // Notifications delivered from one window before the view to two after it (a wait may start long before its
  // delivery): the grid cell's range.
  const ioQuery = useCallback(
    () => client.query(runId, 'ioEvents', askFromNs, askToNs, IO_LIMIT),
    [client, runId, askFromNs, askToNs],
  );
  // A replay run's notifications come from the window it holds: asked again when it holds another.
  const heldKey = detail?.held?.join(' ');
  const ioQueryHeld = useMemo(() => (heldKey === undefined ? ioQuery : () => ioQuery()), [ioQuery, heldKey]);
  const io = useLatestQuery(ioQueryHeld).value;
  const ioBars = useMemo<IoBar[]>(
    () =>
      (io ?? [])
        .filter((r) => r.phase === 'delivered')
        .map((rec) => ({ from: (rec.t_ns - rec.wait_ns) / 1e6, to: rec.t_ns / 1e6, rec })),
    [io],
  );
  const ioFull = (io?.length ?? 0) >= IO_LIMIT;
  // Too many for a bar each: deliveries per pixel column of the strip instead (bounded by its width), each answer
  // carrying its own range so one that arrives for the previous cell still draws where it belongs.
  // The asked range's width on the strip [px]: one column per pixel.
  const stripPx = (STRIP_WIDTHS * width * (askToNs - askFromNs)) / Math.max(1, stripToNs - stripFromNs);
  const ioCountsAsk = useCallback(
    () =>
      client
        .query(runId, 'ioDeliveryCounts', askFromNs, askToNs, Math.max(1, Math.round(stripPx)))
        .then((counts): IoCounts => ({
          counts,
          buckets: counts.length,
          fromMs: askFromNs / 1e6,
          toMs: askToNs / 1e6,
        })),
    [client, runId, askFromNs, askToNs, stripPx],
  );
  // Asked only while the bars are cut short; a replay run's again when it holds another window.
  const ioCountsQuery = useMemo(
    () => (ioFull ? (heldKey === undefined ? ioCountsAsk : () => ioCountsAsk()) : null),
    [ioFull, ioCountsAsk, heldKey],
  );
  const ioCounts = useLatestQuery(ioCountsQuery).value;
  /** The aggregate the strip draws instead of bars (only while the bars would be cut short). */
  const ioShown = ioFull ? ioCounts : null;

  // Every vCPU's states over the same grid cell, split per vCPU with their wake-ups; placed at their rows.
  const statesQuery = useCallback(
    () => client.query(runId, 'vcpuStates', askFromNs, askToNs, STATE_LIMIT),
    [client, runId, askFromNs, askToNs],
  );
  const statesFlat = useLatestQuery(statesQuery).value;
  const stateLabels = useMemo(
    () => stateRows.map((row) => stateLabel(meta, row, setExpanded)),
    [stateRows, meta],
  );
  const statesFull = (statesFlat?.length ?? 0) >= STATE_LIMIT * STATE_COLS;
  const stateLanes = useMemo(
    () => (statesFlat && !statesFull ? splitStates(statesFlat, meta.vcpus.length) : null),
    [statesFlat, statesFull, meta.vcpus.length],
  );
  // Too many spans: each vCPU's share of each state per pixel column of the strip instead (lib/vcpuStates).
  const nvcpus = meta.vcpus.length;
  const sharesAsk = useCallback(
    () =>
      client
        .query(runId, 'vcpuStateShares', askFromNs, askToNs, shareBuckets(stripPx, nvcpus))
        .then((shares): StateShares => ({
          shares,
          buckets: Math.floor(shares.length / (STATE_COLS * Math.max(1, nvcpus))),
          fromMs: askFromNs / 1e6,
          toMs: askToNs / 1e6,
        })),
    [client, runId, askFromNs, askToNs, stripPx, nvcpus],
  );
  const sharesQuery = useMemo(
    () => (statesFull ? (heldKey === undefined ? sharesAsk : () => sharesAsk()) : null),
    [statesFull, sharesAsk, heldKey],
  );
  const shares = useLatestQuery(sharesQuery).value;
  const sharesDrawn = useMemo<ShareRow[]>(
    () =>
      shares && !stateLanes
        ? stateRows.flatMap((row, r) =>
            row.kind === 'vcpu' ? [{ vcpu: row.vcpu, y: statesTop + r * stateStep, h: stateH }] : [],
          )
        : [],
    [shares, stateLanes, stateRows, statesTop, stateH, stateStep],
  );
  const statesDrawn = useMemo<StateRow[]>(
    () =>
      stateRows.flatMap((row, r) => {
        if (row.kind !== 'vcpu' || !stateLanes) return [];
        const lane = stateLanes[row.vcpu];
        if (!lane) return [];
        const y = statesTop + r * stateStep;
        return [{ vcpu: row.vcpu, y, h: stateH, lane, wakes: wakeMarks(lane) }];
      }),
    [stateRows, stateLanes, statesTop, stateH, stateStep],
  );

  useEffect(() => {
    onViewChangeRef.current = onViewChange;
  }, [onViewChange]);

  // Whole run -> full width; zoom transforms rescale this.
  const baseScale = useMemo(
    () => scaleLinear().domain([0, durationMs]).range([0, width]),
    [durationMs, width],
  );

  const colors = useMemo(() => {
    const busy = meta.vcpus.map((v) => domainColor(meta.domains[v.domain]?.color_index ?? v.domain));
    return { busy, idle: busy.map((c) => withAlpha(c, IDLE_ALPHA)) };
  }, [meta, domainColor]);

  // The segments and I/O bars of the window's grid cell ([from, from + 4w]) are drawn once into an offscreen
  // strip; each frame only copies the visible part of it and draws the axis and playhead over it. So a view that
  // follows the playhead costs one drawImage and a few ticks per frame, and the strip is redrawn once per window
  // width (or when the I/O events of a new cell arrive: then only their strip).
  const stripRef = useRef<{
    canvas: HTMLCanvasElement;
    geometry: readonly unknown[];
    lanes: readonly Lane[];
    ioBars: readonly IoBar[];
    ioCounts: IoCounts | null;
    states: readonly StateRow[];
    shares: readonly ShareRow[];
  } | null>(null);
  const segmentsShown = useRef(-1);
  const segmentsAt = useRef(-Infinity);
  const paint = useCallback(
    (s: PlayheadState) => {
      const canvas = canvasRef.current;
      const ctx = canvas?.getContext('2d');
      const { w, from } = gridOf(s.view);
      if (!canvas || !ctx || !(w > 0) || width <= 0) return;
      const [t0, t1] = s.view;
      const dpr = window.devicePixelRatio || 1;
      const cw = Math.max(1, Math.round(width * dpr));
      const ch = Math.round(height * dpr);
      const sh = Math.round(lanesH * dpr);
      // Resizing a canvas reallocates and clears it: only when the size really changes.
      if (canvas.width !== cw) canvas.width = cw;
      if (canvas.height !== ch) canvas.height = ch;

      // The strip's three bands (pCPU lanes, the I/O strip, the state lanes) do not overlap, each is drawn whole
      // on a cleared band, and each is redrawn only when what it shows changed, or everything when the cell or
      // the geometry did (a new strip). The window's lanes, I/O, states and shares arrive as separate answers;
      // the aggregated state lanes are the costly band, so new lanes alone must not redraw them.
      const geometry = [from, w, width, lanesH, colors, theme, LANE_H, ioTop, dpr];
      const cached = stripRef.current;
      const fresh = !cached || cached.geometry.some((d, i) => d !== geometry[i]);
      const lanesStale = fresh || cached.lanes !== lanes;
      const ioStale = fresh || cached.ioBars !== ioBars || cached.ioCounts !== ioShown;
      const statesStale = fresh || cached.states !== statesDrawn || cached.shares !== sharesDrawn;
      if (lanesStale || ioStale || statesStale) {
        const strip = cached?.canvas ?? document.createElement('canvas');
        const sw = STRIP_WIDTHS * width;
        if (fresh) {
          strip.width = Math.max(1, Math.round(sw * dpr));
          strip.height = sh;
        }
        const sctx = strip.getContext('2d');
        if (!sctx) return;
        /** Clears the band [top, bottom) [px] on whole device pixels: the band's edges drawn anew, none left. */
        const clearBand = (top: number, bottom: number) => {
          sctx.setTransform(1, 0, 0, 1, 0, 0);
          const y0 = Math.floor(top * dpr);
          sctx.clearRect(0, y0, strip.width, Math.ceil(bottom * dpr) - y0);
        };
        if (!fresh) {
          if (lanesStale) clearBand(0, ioTop - LANE_GAP);
          if (ioStale) clearBand(ioTop, ioTop + IO_H);
        }
        if (statesStale) clearBand(statesTop, lanesH);
        sctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        sctx.globalAlpha = 1;
        const k = width / w;
        const sx = (t: number) => Math.min(sw, Math.max(0, (t - from) * k));
        if (lanesStale)
          lanes.forEach((lane, p) => {
            const y = PAD_TOP + p * (LANE_H + LANE_GAP);
            sctx.fillStyle = theme.empty;
            sctx.fillRect(0, y, sw, LANE_H);
            const [lo, hi] = visibleRange(lane, from, from + STRIP_WIDTHS * w);
            let runColor = '';
            let runX0 = 0;
            let runX1 = -1;
            const flush = () => {
              if (runX1 > runX0 - 1 && runColor) {
                sctx.fillStyle = runColor;
                sctx.fillRect(runX0, y, Math.max(0.75, runX1 - runX0), LANE_H);
              }
            };
            for (let i = lo; i < hi; i++) {
              const v = lane.vcpu[i]!;
              const color = (lane.task[i]! < 0 ? colors.idle[v] : colors.busy[v]) ?? '#888';
              const x0 = sx(lane.start[i]!);
              const x1 = sx(lane.end[i]!);
              // A sliver inside a pixel the current rectangle already paints adds nothing visible: skip it, so a
              // zoomed-out lane of thousands of short I/O runs costs about one fillRect per pixel column.
              if (x1 - x0 < 1 && x1 <= Math.ceil(runX1)) continue;
              if (color === runColor && x0 - runX1 < 0.5) {
                runX1 = Math.max(runX1, x1);
              } else {
                flush();
                runColor = color;
                runX0 = x0;
                runX1 = x1;
              }
            }
            flush();
          });
        // The I/O strip: how long each notification waited for its vCPU (a long bar is a long scheduling latency).
        // Bars fetched for the previous cell are drawn where they fall until this cell's arrive.
        if (ioStale) {
          sctx.globalAlpha = 1;
          sctx.fillStyle = theme.emptyAlt;
          sctx.fillRect(0, ioTop, sw, IO_H);
          if (ioShown) drawIoCounts(ioShown, sx, sw, ioTop, theme.muted, canvasFill(sctx));
          for (const b of ioShown ? [] : ioBars) {
            const x0 = sx(b.from);
            const x1 = sx(b.to);
            if (x1 <= 0 || x0 >= sw) continue;
            sctx.fillStyle = colors.busy[b.rec.vcpu] ?? '#888';
            sctx.globalAlpha = 0.55;
            sctx.fillRect(x0, ioTop + 2, Math.max(1, x1 - x0), IO_H - 4);
            sctx.globalAlpha = 1;
            sctx.fillRect(Math.max(0, x1 - 1), ioTop, 2, IO_H);
          }
        }
        // The state lanes under it (states fetched for the previous cell, like the I/O bars, until these come).
        if (statesStale) {
          const fill = canvasFill(sctx);
          drawStates(statesDrawn, sx, sw, colors.busy, theme.empty, theme.fg, fill);
          if (shares) drawShares(sharesDrawn, shares, sx, sw, colors.busy, theme.empty, fill);
        }
        sctx.globalAlpha = 1;
        stripRef.current = {
          canvas: strip,
          geometry,
          lanes,
          ioBars,
          ioCounts: ioShown,
          states: statesDrawn,
          shares: sharesDrawn,
        };
      }
      const strip = stripRef.current!.canvas;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, cw, ch);
      const offset = Math.round((t0 - from) * (width / w) * dpr);
      ctx.drawImage(strip, offset, 0, cw, sh, 0, 0, cw, sh);

      // The time axis under the lanes. No digit grouping: "1500", not "1,500" (the unit sits under the labels).
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const x = scaleLinear().domain([t0, t1]).range([0, width]);
      const n = Math.max(2, Math.floor(width / 90));
      const tickFormat = x.tickFormat(n, '~f');
      ctx.fillStyle = AXIS_COLOR;
      ctx.fillRect(0, lanesH, width, 1);
      ctx.font = `11px ${fontFamily()}`;
      ctx.textBaseline = 'alphabetic';
      for (const t of x.ticks(n)) {
        const tx = x(t);
        ctx.fillStyle = AXIS_COLOR;
        ctx.fillRect(Math.round(tx) - 0.5, lanesH, 1, 4);
        const a = anchor(tx, width);
        ctx.textAlign = a === 'middle' ? 'center' : a;
        ctx.fillStyle = theme.muted;
        ctx.fillText(tickFormat(t), tx, lanesH + 14);
      }
      const px = x(s.time);
      if (px >= 0 && px <= width) {
        ctx.strokeStyle = PLAYHEAD_COLOR;
        ctx.lineWidth = PLAYHEAD_W;
        ctx.beginPath();
        ctx.moveTo(px, 0);
        ctx.lineTo(px, lanesH);
        ctx.stroke();
      }

      // How many segments the window shows (a test hook): a few times a second while playing, so most playing
      // frames change nothing in the DOM.
      const now = performance.now();
      if (!s.playing || now - segmentsAt.current >= PLAYING_REFRESH_MS) {
        segmentsAt.current = now;
        const shown = lanes.reduce((sum, lane) => {
          const [lo, hi] = visibleRange(lane, t0, t1);
          return sum + hi - lo;
        }, 0);
        if (shown !== segmentsShown.current) {
          segmentsShown.current = shown;
          figureRef.current?.setAttribute('data-segments', String(shown));
        }
      }
    },
    [
      lanes,
      width,
      height,
      lanesH,
      colors,
      theme,
      LANE_H,
      ioTop,
      ioBars,
      ioShown,
      statesDrawn,
      shares,
      sharesDrawn,
      statesTop,
    ],
  );
  usePlayheadEffect(playhead, paint, { visible });

  // The SVG export redraws the window on screen as shapes (lib/svgExport): the same lanes, runs of one colour
  // merged as on the canvas, the I/O strip, the axis and the playhead, in the canvas's CSS pixels.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    return registerVector(canvas, () => {
      const { view: v, time } = playhead.get();
      const [t0, t1] = v;
      const x = scaleLinear().domain([t0, t1]).range([0, width]);
      const clamp = (t: number) => Math.min(width, Math.max(0, x(t)));
      const out: string[] = [];
      lanes.forEach((lane, p) => {
        const y = PAD_TOP + p * (LANE_H + LANE_GAP);
        out.push(rect(0, y, width, LANE_H, theme.empty));
        const [lo, hi] = visibleRange(lane, t0, t1);
        let color = '';
        let x0 = 0;
        let x1 = -1;
        const flush = () => {
          if (color && x1 > x0 - 1) out.push(rect(x0, y, Math.max(0.75, x1 - x0), LANE_H, color));
        };
        for (let i = lo; i < hi; i++) {
          const vc = lane.vcpu[i]!;
          const c = (lane.task[i]! < 0 ? colors.idle[vc] : colors.busy[vc]) ?? '#888';
          const a = clamp(lane.start[i]!);
          const b = clamp(lane.end[i]!);
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
      out.push(rect(0, ioTop, width, IO_H, theme.emptyAlt));
      const pen = (rx: number, ry: number, rw: number, rh: number, c: string, a = 1) => {
        const left = Math.max(0, rx);
        const right = Math.min(width, rx + rw);
        if (right > left) out.push(rect(left, ry, right - left, rh, c, a < 1 ? ` fill-opacity="${a}"` : ''));
      };
      if (ioShown) drawIoCounts(ioShown, x, width, ioTop, theme.muted, pen);
      for (const bar of ioShown ? [] : ioBars) {
        const a = clamp(bar.from);
        const b = clamp(bar.to);
        if (b <= 0 || a >= width) continue;
        const c = colors.busy[bar.rec.vcpu] ?? '#888';
        out.push(rect(a, ioTop + 2, Math.max(1, b - a), IO_H - 4, c, ' fill-opacity="0.55"'));
        out.push(rect(Math.max(0, b - 1), ioTop, 2, IO_H, c));
      }
      drawStates(statesDrawn, x, width, colors.busy, theme.empty, theme.fg, pen);
      if (shares) drawShares(sharesDrawn, shares, x, width, colors.busy, theme.empty, pen);
      out.push(rect(0, lanesH, width, 1, AXIS_COLOR));
      const n = Math.max(2, Math.floor(width / 90));
      const format = x.tickFormat(n, '~f');
      for (const t of x.ticks(n)) {
        const tx = x(t);
        const a = anchor(tx, width);
        out.push(rect(Math.round(tx) - 0.5, lanesH, 1, 4, AXIS_COLOR));
        out.push(
          `<text x="${tx.toFixed(2)}" y="${lanesH + 14}" fill="${esc(theme.muted)}" font-size="11"` +
            ` font-family="${esc(fontFamily())}" text-anchor="${a}">${esc(format(t))}</text>`,
        );
      }
      const px = x(time);
      if (px >= 0 && px <= width)
        out.push(
          `<line x1="${px}" y1="0" x2="${px}" y2="${lanesH}" stroke="${PLAYHEAD_COLOR}" stroke-width="${PLAYHEAD_W}"/>`,
        );
      return out.join('');
    });
  }, [
    playhead,
    lanes,
    width,
    colors,
    theme,
    LANE_H,
    ioTop,
    lanesH,
    ioBars,
    ioShown,
    statesDrawn,
    shares,
    sharesDrawn,
  ]);

  // Attach d3-zoom once per geometry. Its transform is synced from the shared window only when a gesture may
  // start (in its filter), not every frame; those programmatic transforms carry no sourceEvent and are ignored,
  // so syncing never echoes back.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || width <= 0 || durationMs <= 0) return;
    const behavior: ZoomBehavior<HTMLCanvasElement, unknown> = zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([1, Math.max(1, durationMs / MIN_WINDOW_MS)])
      .extent([
        [0, 0],
        [width, height],
      ])
      .translateExtent([
        [0, 0],
        [width, height],
      ])
      .filter((event: MouseEvent) => {
        const [t0, t1] = playhead.view;
        if (t1 > t0) {
          const k = durationMs / (t1 - t0);
          behavior.transform(select(canvas), zoomIdentity.translate(-k * baseScale(t0), 0).scale(k));
        }
        // d3-zoom's default filter: no secondary buttons, no ctrl-click (ctrl-wheel zooms).
        return (!event.ctrlKey || event.type === 'wheel') && !event.button;
      })
      .on('zoom', (event: D3ZoomEvent<HTMLCanvasElement, unknown>) => {
        if (!event.sourceEvent) return;
        const [a, b] = event.transform.rescaleX(baseScale).domain();
        onViewChangeRef.current([a!, b!]);
      });
    const selection = select(canvas).call(behavior);
    return () => {
      selection.on('.zoom', null);
    };
  }, [width, height, durationMs, baseScale, playhead]);

  /** Time [ms] -> x [px] in the window on screen now. */
  const xNow = () => scaleLinear().domain(playhead.view).range([0, width]);

  /** The notification under the pointer in the I/O strip: the bar it is on, else a delivery within 4 px. */
  const ioHover = (px: number, py: number): Hover | null => {
    if (py > ioTop + IO_H) return null;
    const x = xNow();
    const t = x.invert(px);
    const slack = x.invert(px + 4) - t;
    const on = ioBars.filter((b) => b.from - slack <= t && t <= b.to + slack);
    const b = on.length > 0 ? on.reduce((a, c) => (c.to - c.from < a.to - a.from ? c : a)) : undefined;
    if (ioShown) {
      const k = columnAt(ioShown, t);
      if (k < 0) return null;
      const [a, z] = columnSpan(ioShown, k);
      const n = ioShown.counts[k] ?? 0;
      return {
        x: px,
        y: py,
        lines: [
          `${n} notification${n === 1 ? '' : 's'} delivered in ${fmt(a, 6)} – ${fmt(z, 6)} ms`,
          'aggregated at this zoom: zoom in for each wait',
        ],
      };
    }
    if (!b) return ioFull ? { x: px, y: py, lines: ['too many I/O events here: zoom in'] } : null;
    const vcpu = meta.vcpus[b.rec.vcpu]?.name ?? `vCPU ${b.rec.vcpu}`;
    return {
      x: px,
      y: py,
      lines: [
        `${b.rec.kind} notification for ${vcpu}`,
        b.rec.wait_ns > 0
          ? `pending ${fmt(b.rec.wait_ns / 1e6)} ms until the vCPU ran`
          : 'delivered at once (the vCPU was running)',
        `delivered at ${fmt(b.to, 6)} ms`,
      ],
    };
  };

  /** The state span under the pointer, with the wake-up it ends if any. */
  const statesHover = (px: number, py: number): Hover | null => {
    const r = Math.floor((py - statesTop) / stateStep);
    const row = stateRows[r];
    if (!row || py - statesTop - r * stateStep > stateH) return null;
    if (row.kind === 'more')
      return { x: px, y: py, lines: [moreText(meta, row), 'click its label to show them'] };
    const name = meta.vcpus[row.vcpu]?.name ?? `vCPU ${row.vcpu}`;
    const lane = stateLanes?.[row.vcpu];
    const x = xNow();
    if (!lane && shares && sharesDrawn.length > 0) {
      const k = columnAt(shares, x.invert(px));
      return k < 0 ? null : { x: px, y: py, lines: describeShares(name, shares, row.vcpu, k) };
    }
    if (!lane)
      return { x: px, y: py, lines: [name, statesFull ? 'too many states here: zoom in' : 'no states yet'] };
    const t = x.invert(px);
    const i = stateAt(lane, t);
    if (i < 0) return null;
    const lines = describeSpan(name, lane, i);
    const slack = x.invert(px + 3) - t;
    const wake = wakeMarks(lane).find((m) => m.wake - slack <= t && t <= m.run + slack);
    if (wake)
      lines.push(
        wake.run > wake.wake
          ? `woken at ${fmt(wake.wake, 6)} ms, ran ${fmt(wake.run - wake.wake)} ms later`
          : `woken at ${fmt(wake.wake, 6)} ms and ran at once`,
      );
    return { x: px, y: py, lines };
  };

  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top - PAD_TOP;
    if (e.clientY - rect.top >= statesTop) {
      setHover(statesHover(px, e.clientY - rect.top));
      return;
    }
    if (e.clientY - rect.top >= ioTop) {
      setHover(ioHover(px, e.clientY - rect.top));
      return;
    }
    const p = Math.floor(py / (LANE_H + LANE_GAP));
    const lane = lanes[p];
    if (!lane || py < 0 || py % (LANE_H + LANE_GAP) > LANE_H) {
      setHover(null);
      return;
    }
    const t = xNow().invert(px);
    const i = segmentAt(lane, t);
    const lines =
      i < 0
        ? [`pCPU ${p} idle`, `t = ${fmt(t, 6)} ms`]
        : (() => {
            const vcpu = meta.vcpus[lane.vcpu[i]!];
            const task = lane.task[i]! >= 0 ? meta.tasks[lane.task[i]!] : undefined;
            const domain = vcpu ? meta.domains[vcpu.domain] : undefined;
            return [
              `${vcpu?.name ?? `vCPU ${lane.vcpu[i]}`} (${domain?.name ?? '?'}) on pCPU ${p}`,
              task ? `task ${task.path}` : 'guest idle loop',
              `${fmt(lane.start[i]!, 6)} – ${fmt(lane.end[i]!, 6)} ms (${fmt(lane.end[i]! - lane.start[i]!)} ms)`,
            ];
          })();
    setHover({ x: px, y: e.clientY - rect.top, lines });
  };

  return (
    <figure
      ref={figureRef}
      className={detail?.loading ? 'timeline loading-detail' : 'timeline'}
      data-testid="timeline"
      data-io={ioBars.length}
      data-state-lanes={statesDrawn.length}
      data-state-aggregate={sharesDrawn.length}
      data-io-aggregate={ioShown ? 'yes' : undefined}
      data-detail={detail ? (detail.loading ? 'loading' : 'held') : undefined}
    >
      <Legend
        meta={meta}
        ioFull={ioFull}
        statesFull={statesFull}
        aggregated={
          sharesDrawn.length > 0 ? (ioShown ? 'lanes and I/O' : 'state lanes') : ioShown ? 'I/O strip' : null
        }
      />
      <div className="timeline-body">
        <LaneLabels
          pcpus={lanes.length}
          laneH={LANE_H}
          stateLabels={stateLabels}
          stateH={stateH}
          stateGap={stateStep - stateH}
        />
        <div className="plot" ref={plotRef} style={{ height }}>
          <canvas
            ref={canvasRef}
            style={{ width, height }}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setHover(null)}
            aria-label="Schedule per pCPU: scroll to zoom, drag to pan"
          />
          {detail?.loading && (
            <span className="detail-status muted" data-testid="detail-loading">
              loading detail…
            </span>
          )}
          <Tooltip hover={hover} width={width} />
        </div>
      </div>
      {/* Only when the view is wider than the longest window a run replays: its lanes then show part of it. */}
      {detail && w > detail.capMs && (
        <p className="muted trace-note" data-testid="detail-note">
          Detail replayed on demand from checkpoints, at most {fmt(detail.capMs / 1000)} s at a time
          {detail.held ? ` (held: ${fmt(detail.held[0])}–${fmt(detail.held[1])} ms)` : ''}: zoom in past that
          for the schedule; shares, metrics and distributions cover the whole run.
        </p>
      )}
    </figure>
  );
}

/** The domains' colours, then what the strip and the state lanes draw: compact (short labels in a narrow column,
 * the full meaning in each title) so four columns side by side stay tidy. Memoised, like the lane labels: the
 * timeline re-renders once per window width while playing. */
const Legend = memo(function Legend({
  meta,
  ioFull,
  statesFull,
  aggregated,
}: {
  meta: Meta;
  ioFull: boolean;
  statesFull: boolean;
  /** Which views show per-pixel aggregates at this zoom: the state lanes, the I/O strip, or both. */
  aggregated: string | null;
}) {
  const domainColor = useDomainColor();
  return (
    <figcaption className="legend">
      {meta.domains.slice(0, LEGEND_MAX).map((d) => (
        <span key={d.name} className="legend-item">
          <span className="swatch" style={{ background: domainColor(d.color_index) }} />
          {d.name}
        </span>
      ))}
      {meta.domains.length > LEGEND_MAX && (
        <span className="legend-item muted">
          and {meta.domains.length - LEGEND_MAX} more (hover a segment)
        </span>
      )}
      <span
        className="legend-item muted"
        title="Pale: the guest idle loop (the vCPU holds the pCPU but does no work)"
      >
        <span className="swatch idle" />
        <Short long="pale: guest idle loop" short="idle loop" />
      </span>
      <span
        className="legend-item muted"
        title="The I/O wait strip: each event-channel notification as a bar from pending until its vCPU ran"
      >
        <Short long="I/O wait: event pending until its vCPU runs" short="I/O wait: pending → ran" />
      </span>
      <span
        className="legend-states muted"
        data-testid="state-legend"
        title={
          'The vCPU lanes under the I/O strip: running; spinning at a barrier; runnable (queued for a pCPU); ' +
          'a tick at each wake-up with a line to the dispatch that followed; blank: blocked'
        }
      >
        {STATE_LEGEND.map(({ mark, long, short }) => (
          <span className="legend-item" key={short}>
            <span className={mark} />
            <Short long={long} short={short} />
          </span>
        ))}
      </span>
      {(aggregated || ioFull || statesFull) && (
        <span
          className="legend-item legend-zoom"
          data-testid="legend-zoom"
          data-aggregated={aggregated ?? 'none'}
          title={
            aggregated
              ? 'Too many spans or notifications in this window to draw each: the state lanes show each vCPU’s ' +
                'share of time per pixel (stacked running, spinning, runnable), the I/O strip the ' +
                'notifications delivered per pixel (bar height on a log scale; hover for counts). Zoom in for ' +
                'every span.'
              : 'Too many spans or notifications in this window to draw each: zoom in.'
          }
        >
          {aggregated ? (
            <Short
              long={`${aggregated} aggregated per pixel at this zoom: zoom in for detail`}
              short="aggregated at this zoom"
            />
          ) : (
            'zoom in for detail'
          )}
        </span>
      )}
    </figcaption>
  );
});

/** A legend label in two lengths: the short one in a narrow column (styles.css `.legend` container query). */
function Short({ long, short }: { long: string; short: string }) {
  return (
    <>
      <span className="lg-long">{long}</span>
      <span className="lg-short">{short}</span>
    </>
  );
}

/** What a "+k more" row says. */
function moreText(meta: Meta, row: Extract<LaneRow, { kind: 'more' }>): string {
  return `${meta.domains[row.domain]?.name ?? '?'}: ${row.hidden} more vCPU${row.hidden === 1 ? '' : 's'}`;
}

/** A state lane's label: the vCPU's name, or a button unfolding the domain's other vCPUs. */
function stateLabel(
  meta: Meta,
  row: LaneRow,
  setExpanded: (f: (s: ReadonlySet<number>) => ReadonlySet<number>) => void,
): ReactNode {
  if (row.kind === 'vcpu') {
    const name = meta.vcpus[row.vcpu]?.name ?? `vCPU ${row.vcpu}`;
    return <span title={`${name}: its states`}>{name}</span>;
  }
  return (
    <button
      type="button"
      className="state-more"
      data-testid="state-lanes-more"
      title={`${moreText(meta, row)}: show them`}
      onClick={() => setExpanded((s) => new Set([...s, row.domain]))}
    >
      +{row.hidden} more
    </button>
  );
}

const LaneLabels = memo(function LaneLabels({
  pcpus,
  laneH,
  stateLabels,
  stateH,
  stateGap,
}: {
  pcpus: number;
  laneH: number;
  stateLabels: readonly ReactNode[];
  /** A state lane's height and the gap under it [px]. */
  stateH: number;
  stateGap: number;
}) {
  return (
    <div className="lane-labels" style={{ paddingTop: PAD_TOP }}>
      {Array.from({ length: pcpus }, (_, p) => (
        <div key={p} style={{ height: laneH, marginBottom: LANE_GAP }}>
          {/* Presentation mode's large type fits only the short form (styles.css). */}
          <span className="lane-long">{'pCPU\u00a0'}</span>
          <span className="lane-short" aria-hidden="true">
            P
          </span>
          {p}
        </div>
      ))}
      <div className="io-label" style={{ height: IO_H, marginBottom: LANE_GAP }} title="I/O notifications">
        <span className="lane-long">I/O wait</span>
        <span className="lane-short" aria-hidden="true">
          I/O
        </span>
      </div>
      {stateLabels.map((label, r) => (
        <div
          key={r}
          className="state-label"
          style={{ height: stateH, marginBottom: stateGap + (r === stateLabels.length - 1 ? LANE_GAP : 0) }}
        >
          {label}
        </div>
      ))}
      <div className="unit">ms</div>
    </div>
  );
});
