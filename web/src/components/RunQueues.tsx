// Each pCPU's run queue at the playhead: the running vCPU, then the queued ones in order, as chips coloured by
// domain. The chips are drawn on one canvas per column: four columns of a 16-pCPU host are hundreds of chips, and
// as DOM they cost a style, layout and paint pass several times a second while playing. Only the pCPUs whose queue
// changed are redrawn, and of a scrolling host only those in view. On small hosts at speeds up to 1x (and when
// stepping) the queues play the scheduler's decisions one at a time (lib/runqueueSteps): the chips slide to each
// step and hold there, so a BOOSTed vCPU is seen jumping the queue and then running (never one chip over
// another: lib/runqueueSteps `stepFrame`); faster, they jump and hold still between refreshes. Each
// pCPU's row keeps its element (a label, an accessible description, the chips as hidden test hooks); hovering a
// chip on the canvas says what it is.
import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type PointerEvent,
} from 'react';
import type { SimClient } from '../sim/client';
import type { Meta, RunQueueSnap, RunResult } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { withAlpha } from '../lib/color';
import { toNs } from '../lib/decisions';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import { selectPlaying, selectTime, usePlayhead, type Playhead, type PlayheadState } from '../lib/playhead';
import { fontFamily, useCanvasColors, type CanvasColors } from '../lib/canvasColors';
import { registerVector, SvgRecorder } from '../lib/svgExport';
import {
  CHIP_H,
  CHIP_W,
  GAP,
  chipText,
  ellipsize,
  priStyle,
  queueRow,
  rowKey,
  slotAt,
  slotPosition,
  type QueueRow,
} from '../lib/runqueueLayout';
import {
  HOLD_MS,
  MAX_BACKLOG,
  MOTION_MAX_SPEED,
  SLIDE_MS,
  planSteps,
  stepFrame,
  trimBacklog,
  type RowStep,
  type RunQueueChange,
} from '../lib/runqueueSteps';
import { useVisible } from '../lib/useVisible';
import { useWidth } from '../lib/useWidth';
import { useDetailWindow } from '../app/useDetailWindow';
import { Tooltip, type Hover } from './Tooltip';
import { Terms } from './Reference';

/** Up to this many pCPUs the queues play their steps; beyond, many moving at once is noise, so they jump. */
const ANIMATE_MAX_PCPUS = 4;
/** Beyond this many pCPUs the rows scroll instead of pushing the timeline off screen. */
const ROWS_BEFORE_SCROLL = 4;
/** Width of the "pCPU N" label column [px] (styles.css .rq-row). */
const LABEL_W = 52;
/** Least time the queues hold still while playing faster than they can move (MOTION_MAX_SPEED) [ms]. */
const STILL_MS = 600;
/** Playing faster than the chips can move readably. */
const selectFast = (s: PlayheadState): boolean => s.speed > MOTION_MAX_SPEED;
/** Most snapshot changes one refresh plays as steps; past them (a scrub, a fast playhead) the queues jump. */
const STEP_LIMIT = 64;

/** The chips' type [px]: presentation mode's .rq-plot zoom (1.5) shows it at 18 px. */
const LABEL_PX = 12;

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  readonly playhead: Playhead;
}

/** A chip where it is drawn (mid-slide, between its old and new slot) and how opaque (fading in). */
interface Placed {
  readonly x: number;
  readonly y: number;
  readonly alpha: number;
}

/** What the queues show at a time, and the snapshots that led there since the previous answer (null: jump). */
interface Answer {
  readonly runId: string;
  readonly tNs: number;
  readonly snaps: readonly (RunQueueSnap | null)[];
  readonly changes: readonly RunQueueChange[] | null;
}

/**
 * Plays queued steps one at a time: `begin(step)` starts drawing a step and returns its frame (0..1); each
 * step slides for SLIDE_MS and holds for HOLD_MS. A backlog beyond MAX_BACKLOG is jumped over (`jump` draws a
 * pCPU's latest dropped state at once, before the next step), so the queues never lag far behind.
 */
class StepPlayer {
  private queue: RowStep[] = [];
  private jumps = new Map<number, RowStep>();
  private raf = 0;
  private timer = 0;
  private busy = false;
  /** Steps in the last batch enqueued (a test hook). */
  lastBatch = 0;

  constructor(
    private readonly begin: (step: RowStep) => (ease: number) => void,
    private readonly jump: (step: RowStep) => void,
  ) {}

  enqueue(steps: readonly RowStep[]): void {
    this.lastBatch = steps.length;
    const { kept, jumps } = trimBacklog([...this.queue, ...steps], MAX_BACKLOG);
    this.queue = kept;
    for (const j of jumps) this.jumps.set(j.pcpu, j);
    if (!this.busy) this.next();
  }

  stop(): void {
    cancelAnimationFrame(this.raf);
    clearTimeout(this.timer);
    this.queue = [];
    this.jumps.clear();
    this.busy = false;
  }

  private next = (): void => {
    for (const j of this.jumps.values()) this.jump(j);
    this.jumps.clear();
    const step = this.queue.shift();
    if (!step) {
      this.busy = false;
      return;
    }
    this.busy = true;
    const frame = this.begin(step);
    const t0 = performance.now();
    const tick = (now: number) => {
      const k = Math.min(1, (now - t0) / SLIDE_MS);
      frame(k); // linear: stepFrame eases each of its phases
      if (k < 1) this.raf = requestAnimationFrame(tick);
      else this.timer = window.setTimeout(this.next, HOLD_MS);
    };
    tick(t0);
  };
}

function reducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** Text fitted to a width, by font: chip names and credits repeat every redraw, and measuring is not free. */
const fitted = new Map<string, string>();
function fit(ctx: CanvasRenderingContext2D, text: string, maxW: number): string {
  const key = `${ctx.font}|${maxW}|${text}`;
  let out = fitted.get(key);
  if (out === undefined) {
    if (fitted.size > 5000) fitted.clear();
    out = ellipsize(text, maxW, (t) => ctx.measureText(t).width);
    fitted.set(key, out);
  }
  return out;
}

/**
 * Draws one pCPU's chips at `placed` (by vCPU) into a context scaled to CSS pixels. In passes (boxes, names,
 * classes), so the font, whose every assignment the canvas parses, is set a few times per row, not per chip.
 */
function drawRow(
  ctx: CanvasRenderingContext2D,
  meta: Meta,
  row: QueueRow,
  placed: ReadonlyMap<number, Placed>,
  perRow: number,
  colors: CanvasColors,
  domainColor: (colorIndex: number) => string,
  font: string,
) {
  ctx.textBaseline = 'middle';
  if (row.idle) {
    const { x, y } = slotPosition(0, perRow);
    ctx.setLineDash([3, 2]);
    ctx.strokeStyle = colors.line;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.roundRect(x + 0.5, y + 0.5, CHIP_W - 1, CHIP_H - 1, 4);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = colors.muted;
    ctx.font = `${LABEL_PX}px ${font}`;
    ctx.textAlign = 'center';
    ctx.fillText('idle', x + CHIP_W / 2, y + CHIP_H / 2);
    ctx.textAlign = 'left';
  }
  const chips = row.entries.flatMap((e, i) => {
    const at = placed.get(e.vcpu);
    if (!at) return [];
    const vcpu = meta.vcpus[e.vcpu];
    const color = domainColor((vcpu && meta.domains[vcpu.domain]?.color_index) ?? e.vcpu);
    const pri = priStyle(e.class);
    return [{ e, at, color, running: row.running && i === 0, name: vcpu?.name ?? `vCPU ${e.vcpu}`, pri }];
  });
  const border = colors.dark ? 'rgba(255, 255, 255, 0.16)' : 'rgba(0, 0, 0, 0.12)';
  for (const { at, color, running } of chips) {
    const { x, y } = at;
    ctx.globalAlpha = at.alpha;
    ctx.beginPath();
    ctx.roundRect(x + 0.5, y + 0.5, CHIP_W - 1, CHIP_H - 1, 4);
    ctx.fillStyle = withAlpha(color, running ? 0.32 : 0.14);
    ctx.fill();
    ctx.lineWidth = running ? 2 : 1;
    ctx.strokeStyle = running ? colors.fg : border;
    ctx.stroke();
    // The domain's colour as a thick left edge, as the legend swatches show it.
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.roundRect(x, y, 5, CHIP_H, [4, 0, 0, 4]);
    ctx.fill();
  }
  const maxW = CHIP_W - 12;
  ctx.font = `600 ${LABEL_PX}px ${font}`;
  ctx.fillStyle = colors.fg;
  for (const { at, running, name } of chips) {
    ctx.globalAlpha = at.alpha;
    ctx.fillText(fit(ctx, `${running ? '▶ ' : ''}${name}`, maxW), at.x + 9, at.y + CHIP_H / 2 - 7);
  }
  // The policy's label in bold, styled by its class (priStyle), then the credit.
  const tone = { bad: colors.bad, muted: colors.muted, fg: colors.fg };
  for (const italic of [false, true]) {
    ctx.font = `${italic ? 'italic ' : ''}600 ${LABEL_PX}px ${font}`;
    for (const { at, e, pri } of chips) {
      if (pri.italic !== italic) continue;
      ctx.globalAlpha = at.alpha;
      ctx.fillStyle = tone[pri.tone];
      ctx.fillText(e.pri, at.x + 9, at.y + CHIP_H / 2 + 8);
    }
  }
  const priW = new Map<string, number>();
  ctx.font = `600 ${LABEL_PX}px ${font}`;
  for (const { e } of chips) if (!priW.has(e.pri)) priW.set(e.pri, ctx.measureText(e.pri).width);
  ctx.font = `${LABEL_PX}px ${font}`;
  for (const { at, e, pri } of chips) {
    if (e.credit === undefined) continue;
    const w = priW.get(e.pri) ?? 0;
    ctx.globalAlpha = at.alpha;
    ctx.fillStyle = pri.tone === 'muted' ? colors.muted : colors.fg;
    // Squeezed rather than cut when a long credit does not fit: the number is what the chip is read for.
    ctx.fillText(` · ${e.credit}`, at.x + 9 + w, at.y + CHIP_H / 2 + 8, Math.max(1, CHIP_W - 11 - w));
  }
  ctx.globalAlpha = 1;
}

/** What the canvas shows of one pCPU, for screen readers. */
function describeRow(meta: Meta, row: QueueRow, known: boolean, p: number): string {
  if (!known) return `pCPU ${p}: no run queue yet`;
  const names = row.entries.map((e, i) => {
    const name = meta.vcpus[e.vcpu]?.name ?? `vCPU ${e.vcpu}`;
    return `${row.running && i === 0 ? 'running ' : ''}${name} ${e.pri}${e.credit === undefined ? '' : ` ${e.credit}`}`;
  });
  return `pCPU ${p}: ${row.idle ? 'idle; ' : ''}${names.length > 0 ? names.join(', ') : 'nothing queued'}`;
}

/** Height of a pCPU's row when `perRow` chips fit across [px]. */
function rowHeight(row: QueueRow, perRow: number): number {
  const lines = Math.max(1, Math.ceil((row.entries.length + (row.idle ? 1 : 0)) / perRow));
  return lines * (CHIP_H + GAP) - GAP;
}

/** Margin under each row [px] (styles.css .rq-row). */
const ROW_GAP = 4;
/** Height of the scrolling box of a large host's rows [px] (styles.css .rq-rows.scroll). */
const SCROLL_H = 190;

/** One pCPU's row as elements: its label, the space its chips take on the canvas, and the chips as test hooks. */
const RowDom = memo(
  function RowDom({
    p,
    meta,
    row,
    known,
    queued,
    height,
  }: {
    p: number;
    meta: Meta;
    row: QueueRow;
    rowKey: string;
    known: boolean;
    queued: number | undefined;
    height: number;
  }) {
    const first = row.idle ? 1 : 0;
    return (
      <div className="rq-row" data-testid={`runqueue-pcpu-${p}`} data-queued={queued}>
        <div className="rq-label">pCPU {p}</div>
        <div className="rq-slots" style={{ height }} role="img" aria-label={describeRow(meta, row, known, p)}>
          {/* The chips as elements, not drawn (the canvas draws them): test hooks, with the hover's text. */}
          <ol hidden>
            {row.entries.map((e, i) => {
              const running = row.running && i === 0;
              const { name, title } = chipText(meta, e, i + first, running);
              return (
                <li
                  key={e.vcpu}
                  data-testid="rq-chip"
                  data-vcpu={e.vcpu}
                  data-pri={e.pri}
                  data-pri-class={e.class}
                  data-running={running}
                  data-slot={i + first}
                  title={title}
                >
                  {running ? 'running ' : ''}
                  {name} {e.pri}
                  {e.credit === undefined ? '' : ` · ${e.credit}`}
                </li>
              );
            })}
          </ol>
        </div>
      </div>
    );
  },
  // A new snapshot with the same queue shows the same: skip it (most pCPUs, most of the time, while playing).
  (a, b) =>
    a.rowKey === b.rowKey &&
    a.known === b.known &&
    a.queued === b.queued &&
    a.meta === b.meta &&
    a.height === b.height &&
    a.p === b.p,
);

/** What the canvas holds: to redraw only the rows that changed, and to slide chips from where they were. */
interface Drawn {
  /** Everything that moves every row: size, scale, colours. */
  readonly layout: string;
  readonly keys: readonly string[];
  /** Per row, where each vCPU's chip was last drawn. */
  readonly at: Map<number, Placed>[];
  /** Rows that changed while scrolled out of view: drawn when they scroll in. */
  readonly stale: Set<number>;
}

export function RunQueues({ client, run, playhead }: Props) {
  const domainColor = useDomainColor();
  const plotRef = useRef<HTMLDivElement>(null);
  const ref = useRef<HTMLDivElement>(null);
  const figureRef = useRef<HTMLElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useWidth(ref, 400);
  const colors = useCanvasColors();
  // Nobody reads a queue that changes 60 times a second: a few updates a second while playing, none off screen.
  const visible = useVisible(plotRef);
  // Faster than the queues can move readably, they hold still between refreshes long enough to be read.
  const fast = usePlayhead(playhead, selectFast);
  const refreshMs = fast ? STILL_MS : PLAYING_REFRESH_MS;
  const tNs = toNs(usePlayhead(playhead, selectTime, { playingMs: refreshMs, visible }));
  const playing = usePlayhead(playhead, selectPlaying);
  const { runId, meta } = run;
  const detail = useDetailWindow(playhead, run, 'playhead', { playingMs: refreshMs, visible });
  const animate = meta.pcpus <= ANIMATE_MAX_PCPUS;

  // Motion up to 1x only: the speed is what the playhead covered since the last refresh, per wall-clock time.
  const motion = useRef(true);
  const sample = useRef<{ t: number; wall: number } | null>(null);
  useEffect(() => {
    const now = performance.now();
    const last = sample.current;
    if (!playing) motion.current = true;
    else if (last && now > last.wall)
      motion.current = (tNs - last.t) / 1e6 / (now - last.wall) <= MOTION_MAX_SPEED;
    sample.current = { t: tNs, wall: now };
  }, [tNs, playing]);

  // The queues at the playhead and, when they move, the snapshots since the last answer, to play as steps.
  const answered = useRef<{ runId: string; tNs: number } | null>(null);
  const query = useCallback(async (): Promise<Answer> => {
    const last = answered.current;
    // Steps only from an answer within this window (the window holds every step from its start).
    const from =
      animate &&
      motion.current &&
      !reducedMotion() &&
      last?.runId === runId &&
      last.tNs < tNs &&
      last.tNs >= detail.from_ns
        ? last.tNs
        : null;
    const [snaps, changes] = await Promise.all([
      client.query(runId, 'runqueues', detail, tNs),
      from === null
        ? Promise.resolve(null)
        : client.query(runId, 'runqueueChanges', detail, from, tNs, STEP_LIMIT),
    ]);
    answered.current = { runId, tNs };
    return { runId, tNs, snaps, changes };
  }, [client, runId, detail, tNs, animate]);
  const { value, error } = useLatestQuery(query);
  const slotsW = Math.max(CHIP_W, width - LABEL_W);
  const perRow = Math.max(1, Math.floor((slotsW + GAP) / (CHIP_W + GAP)));
  const scroll = meta.pcpus > ROWS_BEFORE_SCROLL;
  // The rows' elements (chips as hidden test hooks, screen-reader text) show the queues as they were when
  // playback last stopped: while playing, rewriting hundreds of hidden elements ten times a second cost more main-
  // thread time than drawing the chips. The canvas and the rows' heights follow playback.
  const [held, setHeld] = useState(value);
  if (!playing && held !== value) setHeld(value);
  const domValue = playing ? held : value;
  const domRows = useMemo(
    () => Array.from({ length: meta.pcpus }, (_, p) => queueRow(domValue?.snaps[p] ?? null)),
    [domValue, meta.pcpus],
  );
  const rows = useMemo(
    () => Array.from({ length: meta.pcpus }, (_, p) => queueRow(value?.snaps[p] ?? null)),
    [value, meta.pcpus],
  );
  const { heights, tops } = useMemo(() => {
    const heights = rows.map((r) => rowHeight(r, perRow));
    const tops: number[] = [];
    for (let p = 0, y = 0; p < heights.length; p++) {
      tops.push(y);
      y += heights[p]! + ROW_GAP;
    }
    return { heights, tops };
  }, [rows, perRow]);
  const totalH = Math.max(1, (tops[tops.length - 1] ?? 0) + (heights[heights.length - 1] ?? 0));
  const layoutKey = `${slotsW}x${totalH}:${heights.join(',')}:${window.devicePixelRatio || 1}`;
  const drawn = useRef<Drawn | null>(null);
  const scrollTop = useRef(0);

  /**
   * Draws the rows in `which` that are in view (all, on a small host); the others wait until scrolled to. Each
   * row shows `rowOf(p)` (its latest state unless a step is playing), clipped to the row's box: a step's row
   * may hold a chip more than the row has room for, and nothing may spill into the next row.
   */
  const drawRows = useCallback(
    (
      which: Iterable<number>,
      placedOf: (p: number) => Map<number, Placed>,
      rowOf: (p: number) => QueueRow | undefined = (p) => rows[p],
    ) => {
      const canvas = canvasRef.current;
      const ctx = canvas?.getContext('2d');
      const d = drawn.current;
      if (!ctx || !d) return;
      const dpr = window.devicePixelRatio || 1;
      const top = scrollTop.current;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      for (const p of which) {
        const row = rowOf(p);
        const y = tops[p];
        const h = heights[p];
        if (!row || y === undefined || h === undefined) continue;
        if (scroll && (y > top + SCROLL_H || y + h < top)) {
          d.stale.add(p);
          continue;
        }
        d.stale.delete(p);
        const placed = placedOf(p);
        d.at[p] = placed;
        ctx.save();
        ctx.translate(0, y);
        // Half the gap above and below too: a running chip's 2 px border reaches half a pixel past the row, and
        // a chip sliding sideways would leave that edge behind as a stray line.
        ctx.clearRect(0, -ROW_GAP / 2 + 0.5, slotsW, h + ROW_GAP - 1);
        ctx.beginPath();
        ctx.rect(0, -ROW_GAP / 2 + 0.5, slotsW, h + ROW_GAP - 1);
        ctx.clip();
        drawRow(ctx, meta, row, placed, perRow, colors, domainColor, fontFamily());
        ctx.restore();
      }
    },
    [rows, tops, heights, scroll, slotsW, meta, perRow, colors, domainColor],
  );
  const placesOf = useCallback(
    (row: QueueRow | undefined) => {
      const first = row?.idle ? 1 : 0;
      return new Map<number, Placed>(
        (row?.entries ?? []).map((e, i) => [e.vcpu, { ...slotPosition(i + first, perRow), alpha: 1 }]),
      );
    },
    [perRow],
  );
  const target = useCallback((p: number) => placesOf(rows[p]), [placesOf, rows]);

  // The step player draws through the latest drawing functions (a step outlives the render it started in).
  const latest = useRef({ drawRows, placesOf });
  useLayoutEffect(() => {
    latest.current = { drawRows, placesOf };
  }, [drawRows, placesOf]);
  const player = useRef<StepPlayer | null>(null);
  player.current ??= new StepPlayer(
    (step) => {
      // From where its chips are drawn now to the step's slots, never one chip over another (stepFrame).
      const was = drawn.current?.at[step.pcpu] ?? new Map<number, Placed>();
      const to = latest.current.placesOf(step.row);
      return (ease) =>
        latest.current.drawRows(
          [step.pcpu],
          () => stepFrame(was, to, ease),
          () => step.row,
        );
    },
    (step) =>
      latest.current.drawRows(
        [step.pcpu],
        () => latest.current.placesOf(step.row),
        () => step.row,
      ),
  );
  useEffect(() => () => player.current?.stop(), []);
  /** The rows as of the last answer played or drawn: where the next answer's steps start. */
  const base = useRef<readonly QueueRow[]>([]);

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    const pl = player.current;
    if (!canvas || !visible || !pl) return;
    const keys = rows.map(rowKey);
    const layout = `${layoutKey}:${JSON.stringify(colors)}:${perRow}`;
    const prev = drawn.current;
    const from = base.current;
    base.current = rows;
    if (!prev || prev.layout !== layout) {
      // A new size or new colours: resize (which clears) and draw every row.
      pl.stop();
      const dpr = window.devicePixelRatio || 1;
      canvas.width = Math.max(1, Math.round(slotsW * dpr));
      canvas.height = Math.round(totalH * dpr);
      drawn.current = { layout, keys, at: rows.map(() => new Map()), stale: new Set() };
      drawRows(rows.keys(), target);
      return;
    }
    const changed = keys.flatMap((k, p) => (k !== prev.keys[p] ? [p] : []));
    drawn.current = { ...prev, keys };
    if (changed.length === 0) return;
    const changes = value?.changes;
    if (!animate || !changes || reducedMotion()) {
      pl.stop();
      drawRows(changed, target);
      return;
    }
    // Each decision since the last answer as a step; every changed pCPU ends in its latest state.
    const steps = planSteps(from, changes);
    for (const p of changed) {
      const last = steps.findLast((st) => st.pcpu === p);
      if (!last || rowKey(last.row) !== keys[p]) steps.push({ pcpu: p, row: rows[p]! });
    }
    pl.enqueue(steps);
    figureRef.current?.setAttribute('data-steps', String(pl.lastBatch));
  }, [rows, value, layoutKey, colors, perRow, slotsW, totalH, animate, visible, drawRows, target]);

  // The SVG export draws the rows with the same drawRow, into a recorder of shapes (lib/svgExport).
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    return registerVector(canvas, () => {
      const pen = new SvgRecorder();
      rows.forEach((row, p) => {
        pen.save();
        pen.translate(0, (tops[p] ?? 0) - (scroll ? scrollTop.current : 0));
        drawRow(
          pen as unknown as CanvasRenderingContext2D,
          meta,
          row,
          target(p),
          perRow,
          colors,
          domainColor,
          fontFamily(),
        );
        pen.restore();
      });
      return pen.markup();
    });
  }, [rows, tops, scroll, meta, target, perRow, colors, domainColor]);

  const onScroll = () => {
    scrollTop.current = ref.current?.scrollTop ?? 0;
    const stale = drawn.current?.stale;
    if (stale && stale.size > 0) drawRows([...stale], target);
  };

  const [hover, setHover] = useState<Hover | null>(null);
  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const plot = plotRef.current?.getBoundingClientRect();
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top;
    const p = tops.findIndex((t, i) => py >= t && py < t + (heights[i] ?? 0));
    const row = rows[p];
    const slot = row ? slotAt(px, py - tops[p]!, perRow) : -1;
    const i = slot - (row?.idle ? 1 : 0);
    const entry = row?.entries[i];
    if (!row || !entry || !plot) {
      setHover(null);
      return;
    }
    const running = row.running && i === 0;
    setHover({
      x: e.clientX - plot.left,
      y: e.clientY - plot.top,
      lines: [`pCPU ${p}: ${chipText(meta, entry, slot, running).title}`],
    });
  };

  return (
    <figure
      ref={figureRef}
      className="runqueues"
      data-testid="runqueues"
      data-view="runqueues"
      aria-label="Run queue per pCPU at the playhead"
    >
      <figcaption className="muted">
        {/* The priorities' and credit's first use links to the glossary. */}
        <Terms
          text="Run queues at the playhead: ▶ running, then queued in order (priority, e.g. BOOST, UNDER, OVER · credit)"
          seen={new Set()}
        />
        {error && ` — unavailable: ${error}`}
      </figcaption>
      <div ref={plotRef} className="rq-plot">
        <div
          ref={ref}
          className={scroll ? 'rq-rows scroll' : 'rq-rows'}
          onScroll={scroll ? onScroll : undefined}
        >
          {domRows.map((row, p) => {
            const snap = domValue?.snaps[p] ?? null;
            return (
              <RowDom
                key={p}
                p={p}
                meta={meta}
                row={row}
                rowKey={rowKey(row)}
                known={snap !== null}
                queued={snap?.queued.length}
                height={heights[p]!}
              />
            );
          })}
          {/* One canvas for every pCPU's chips: a canvas is a compositor layer, and 64 of them cost more per
              frame than the drawing. After the rows, so it paints over them: before them, each row's positioned
              box overlapped a composited canvas and had to become a layer of its own. */}
          <canvas
            ref={canvasRef}
            className="rq-canvas"
            // The size its labels are drawn at [CSS px] (a test hook: type on a canvas has no computed style).
            data-label-px={LABEL_PX}
            style={{ left: LABEL_W, width: slotsW, height: totalH }}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setHover(null)}
            aria-hidden="true"
          />
        </div>
        <Tooltip hover={hover} width={width} />
      </div>
    </figure>
  );
}
