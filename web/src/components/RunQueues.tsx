// Each pCPU's run queue at the playhead: the running vCPU, then the queued ones in order, as chips coloured by
// domain. The chips are drawn on one canvas per column: four columns of a 16-pCPU host are hundreds of chips, and
// as DOM they cost a style, layout and paint pass several times a second while playing. Only the pCPUs whose queue
// changed are redrawn, and of a scrolling host only those in view. On small hosts a chip slides from its old slot
// to its new one, so a BOOSTed vCPU visibly jumps the queue. Each pCPU's row keeps its element (a label, an
// accessible description, the chips as hidden test hooks); hovering a chip on the canvas says what it is.
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState, type PointerEvent } from 'react';
import type { SimClient } from '../sim/client';
import type { Meta, RunResult } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { withAlpha } from '../lib/color';
import { toNs } from '../lib/decisions';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import { selectPlaying, selectTime, usePlayhead, type Playhead } from '../lib/playhead';
import { fontFamily, useCanvasColors, type CanvasColors } from '../lib/canvasColors';
import {
  CHIP_H,
  CHIP_W,
  GAP,
  chipText,
  ellipsize,
  queueRow,
  rowKey,
  slotAt,
  slotPosition,
  type QueueRow,
} from '../lib/runqueueLayout';
import { useVisible } from '../lib/useVisible';
import { useWidth } from '../lib/useWidth';
import { Tooltip, type Hover } from './Tooltip';

/** Up to this many pCPUs chips slide to their new slot; beyond, many moving at once is noise, so they jump. */
const ANIMATE_MAX_PCPUS = 4;
/** Beyond this many pCPUs the rows scroll instead of pushing the timeline off screen. */
const ROWS_BEFORE_SCROLL = 4;
/** Width of the "pCPU N" label column [px] (styles.css .rq-row). */
const LABEL_W = 52;
/** How long a chip takes to slide to its new slot [ms]. */
const SLIDE_MS = 220;

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
    ctx.font = `11px ${font}`;
    ctx.textAlign = 'center';
    ctx.fillText('idle', x + CHIP_W / 2, y + CHIP_H / 2);
    ctx.textAlign = 'left';
  }
  const chips = row.entries.flatMap((e, i) => {
    const at = placed.get(e.vcpu);
    if (!at) return [];
    const vcpu = meta.vcpus[e.vcpu];
    const color = domainColor((vcpu && meta.domains[vcpu.domain]?.color_index) ?? e.vcpu);
    const pri = e.pri.toLowerCase();
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
  ctx.font = `600 12px ${font}`;
  ctx.fillStyle = colors.fg;
  for (const { at, running, name } of chips) {
    ctx.globalAlpha = at.alpha;
    ctx.fillText(fit(ctx, `${running ? '▶ ' : ''}${name}`, maxW), at.x + 9, at.y + CHIP_H / 2 - 7);
  }
  // Priority class in bold (BOOST in the warning colour, OVER and PARKED quiet), then the credit.
  const quiet = (pri: string) => pri === 'over' || pri === 'parked';
  for (const italic of [false, true]) {
    ctx.font = `${italic ? 'italic ' : ''}600 12px ${font}`;
    for (const { at, e, pri } of chips) {
      if ((pri === 'parked') !== italic) continue;
      ctx.globalAlpha = at.alpha;
      ctx.fillStyle = pri === 'boost' ? colors.bad : quiet(pri) ? colors.muted : colors.fg;
      ctx.fillText(e.pri, at.x + 9, at.y + CHIP_H / 2 + 8);
    }
  }
  const priW = new Map<string, number>();
  ctx.font = `600 12px ${font}`;
  for (const { e } of chips) if (!priW.has(e.pri)) priW.set(e.pri, ctx.measureText(e.pri).width);
  ctx.font = `12px ${font}`;
  for (const { at, e, pri } of chips) {
    if (e.credit === undefined) continue;
    const w = priW.get(e.pri) ?? 0;
    ctx.globalAlpha = at.alpha;
    ctx.fillStyle = quiet(pri) ? colors.muted : colors.fg;
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
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useWidth(ref, 400);
  const colors = useCanvasColors();
  // Nobody reads a queue that changes 60 times a second: a few updates a second while playing, none off screen.
  const visible = useVisible(plotRef);
  const tNs = toNs(usePlayhead(playhead, selectTime, { playingMs: PLAYING_REFRESH_MS, visible }));
  const { runId } = run;
  const query = useCallback(() => client.query(runId, 'runqueues', tNs), [client, runId, tNs]);
  const { value, error } = useLatestQuery(query);
  const { meta } = run;
  const slotsW = Math.max(CHIP_W, width - LABEL_W);
  const perRow = Math.max(1, Math.floor((slotsW + GAP) / (CHIP_W + GAP)));
  const scroll = meta.pcpus > ROWS_BEFORE_SCROLL;
  const animate = meta.pcpus <= ANIMATE_MAX_PCPUS;
  // The rows' elements (chips as hidden test hooks, screen-reader text) show the queues as they were when
  // playback last stopped: while playing, rewriting hundreds of hidden elements ten times a second cost more main-
  // thread time than drawing the chips. The canvas and the rows' heights follow playback.
  const playing = usePlayhead(playhead, selectPlaying);
  const [held, setHeld] = useState(value);
  if (!playing && held !== value) setHeld(value);
  const domValue = playing ? held : value;
  const domRows = useMemo(
    () => Array.from({ length: meta.pcpus }, (_, p) => queueRow(domValue?.[p] ?? null)),
    [domValue, meta.pcpus],
  );
  const rows = useMemo(
    () => Array.from({ length: meta.pcpus }, (_, p) => queueRow(value?.[p] ?? null)),
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

  /** Draws the rows in `which` that are in view (all, on a small host); the others wait until scrolled to. */
  const drawRows = useCallback(
    (which: Iterable<number>, placedOf: (p: number) => Map<number, Placed>) => {
      const canvas = canvasRef.current;
      const ctx = canvas?.getContext('2d');
      const d = drawn.current;
      if (!ctx || !d) return;
      const dpr = window.devicePixelRatio || 1;
      const top = scrollTop.current;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      for (const p of which) {
        const row = rows[p];
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
        ctx.clearRect(0, 0, slotsW, h);
        drawRow(ctx, meta, row, placed, perRow, colors, domainColor, fontFamily());
        ctx.restore();
      }
    },
    [rows, tops, heights, scroll, slotsW, meta, perRow, colors, domainColor],
  );
  const target = useCallback(
    (p: number) => {
      const row = rows[p];
      const first = row?.idle ? 1 : 0;
      return new Map<number, Placed>(
        (row?.entries ?? []).map((e, i) => [e.vcpu, { ...slotPosition(i + first, perRow), alpha: 1 }]),
      );
    },
    [rows, perRow],
  );

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !visible) return;
    const keys = rows.map(rowKey);
    const layout = `${layoutKey}:${JSON.stringify(colors)}:${perRow}`;
    const prev = drawn.current;
    if (!prev || prev.layout !== layout) {
      // A new size or new colours: resize (which clears) and draw every row.
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
    if (!animate || reducedMotion()) {
      drawRows(changed, target);
      return;
    }
    // Slide each chip of the changed rows from where it was drawn to its new slot; new chips fade in.
    const from = changed.map((p) => prev.at[p] ?? new Map<number, Placed>());
    let raf = 0;
    const t0 = performance.now();
    const step = (now: number) => {
      const k = Math.min(1, (now - t0) / SLIDE_MS);
      const ease = 1 - (1 - k) ** 3; // ease-out, as the CSS transition of the chips was
      drawRows(changed, (p) => {
        const was = from[changed.indexOf(p)]!;
        const placed = new Map<number, Placed>();
        for (const [v, to] of target(p)) {
          const w = was.get(v);
          placed.set(
            v,
            w
              ? { x: w.x + (to.x - w.x) * ease, y: w.y + (to.y - w.y) * ease, alpha: 1 }
              : { ...to, alpha: ease },
          );
        }
        return placed;
      });
      if (k < 1) raf = requestAnimationFrame(step);
    };
    step(t0);
    return () => cancelAnimationFrame(raf);
  }, [rows, layoutKey, colors, perRow, slotsW, totalH, animate, visible, drawRows, target]);

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
    <figure className="runqueues" aria-label="Run queue per pCPU at the playhead">
      <figcaption className="muted">
        Run queues at the playhead: ▶ running, then queued in order (priority · credit)
        {error && ` — unavailable: ${error}`}
      </figcaption>
      <div ref={plotRef} className="rq-plot">
        <div
          ref={ref}
          className={scroll ? 'rq-rows scroll' : 'rq-rows'}
          onScroll={scroll ? onScroll : undefined}
        >
          {domRows.map((row, p) => {
            const snap = domValue?.[p] ?? null;
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
