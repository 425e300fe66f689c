// A column's timeline: the shell that stacks its tracks (./tracks: the pCPU lanes, the I/O strip, the vCPU state
// lanes, and what else `TRACKS` lists) over one time axis. The shell owns the canvas, the time axis, the playhead,
// the zoom and the pointer; each track asks the run's worker for the window of detail the column's views share
// (app/useDetailWindow: one decision for all), draws its answer into its band and says what is under the pointer.
// The bands of the window's grid cell are drawn once into an offscreen strip, each again only when its answer
// changes; playback draws every frame straight from the Playhead store (copying the visible part of the strip,
// then the axis and the playhead): a frame costs no React render and changes nothing in the DOM. Legend, labels
// and tooltip stay React-owned HTML. d3-zoom only listens for gestures and reports the new time window, which the
// page shares with every column.
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
import type { DetailWindow, RunOpening } from '../sim/types';
import { useDetailWindow } from '../app/useDetailWindow';
import { PresentingContext, useDomainColor } from '../lib/theme';
import { withAlpha } from '../lib/color';
import { anchor, fmt } from '../lib/format';
import { useVisible } from '../lib/useVisible';
import { fontFamily, useCanvasColors } from '../lib/canvasColors';
import { useWidth } from '../lib/useWidth';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import { MIN_WINDOW_MS, windowKey, type View } from '../lib/view';
import { usePlayhead, usePlayheadEffect, type Playhead, type PlayheadState } from '../lib/playhead';
import { Tooltip, type Hover } from './Tooltip';
import { esc, rect, registerVector } from '../lib/svgExport';
import { TRACKS } from './tracks';
import { Legend } from './TimelineLegend';
import {
  LANE_GAP,
  canvasFill,
  type Fill,
  type Track,
  type TrackContext,
  type TrackKind,
} from './tracks/track';

const PAD_TOP = 4;
/** The time axis: its height, its tick labels' size and baseline [px]. Presentation mode draws the labels at the
 * 18 px the rest of its type has (the canvas cannot take it from CSS). */
const AXIS = { h: 18, labelPx: 11, baseline: 14 } as const;
const AXIS_PRESENTING = { h: 22, labelPx: 18, baseline: 19 } as const;
/** Room per tick label [px]: larger labels, fewer ticks. */
const TICK_ROOM = 90;
const TICK_ROOM_PRESENTING = 130;
/** Opacity of the guest idle loop: the vCPU holds the pCPU but does no work. */
const IDLE_ALPHA = 0.3;

interface Props {
  /** The run drawn: its tracks ask its worker for the window on screen. */
  readonly run: RunOpening;
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
 * width, but t1 - t0 jitters in the last bits), and `from`, one width before the cell the window starts in. The
 * strip covers [from, from + STRIP_WIDTHS * w]: a window that follows the playhead moves to a new cell once per
 * window width, not per frame.
 */
function gridOf([t0, t1]: View): { w: number; from: number } {
  const w = Number((t1 - t0).toPrecision(9));
  return { w, from: w > 0 ? (Math.floor(t0 / w) - 1) * w : 0 };
}
const selectWidth = (s: PlayheadState): number => gridOf(s.view).w;

/** A track made for this run, with its kind. */
interface Made {
  readonly kind: TrackKind<unknown>;
  readonly track: Track<unknown>;
  /** Its band's top in the plot [px]. */
  readonly top: number;
}

/** The tracks' answers for a window, by kind id, and the run and window they answer for. */
interface Answer {
  readonly runId: string;
  readonly window: DetailWindow;
  readonly data: ReadonlyMap<string, unknown>;
}

/** Which of the aggregating tracks draw per-pixel aggregates, in the legend's words. */
function aggregatedText(ids: readonly string[]): string | null {
  const states = ids.includes('vcpu-states');
  const io = ids.includes('io-strip');
  if (states && io) return 'lanes and I/O';
  if (states) return 'state lanes';
  if (io) return 'I/O strip';
  return ids.length > 0 ? ids.join(' and ') : null;
}

export function Timeline({ run, durationMs, playhead, onViewChange, client }: Props) {
  const { meta } = run;
  const domainColor = useDomainColor();
  // The bands' empty background follows the page's theme (a canvas cannot read CSS variables).
  const theme = useCanvasColors();
  const presenting = useContext(PresentingContext);
  // Every frame while the chart is on screen (its legend above it may be while the chart is not); off screen
  // nothing until it scrolls back or playback stops.
  const figureRef = useRef<HTMLElement>(null);
  const plotRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const visible = useVisible(plotRef);
  const width = useWidth(plotRef);
  const onViewChangeRef = useRef(onViewChange);
  const [hover, setHover] = useState<Hover | null>(null);

  const [shown, setShown] = useState<ReadonlySet<string>>(
    () => new Set(TRACKS.filter((k) => !k.optional).map((k) => k.id)),
  );
  const toggle = useCallback(
    (id: string) =>
      setShown((s) => {
        const next = new Set(s);
        if (!next.delete(id)) next.add(id);
        return next;
      }),
    [],
  );
  const [unfolded, setUnfolded] = useState<ReadonlyMap<string, ReadonlySet<number>>>(() => new Map());
  const colors = useMemo(() => {
    const busy = meta.vcpus.map((v) => domainColor(meta.domains[v.domain]?.color_index ?? v.domain));
    return { busy, idle: busy.map((c) => withAlpha(c, IDLE_ALPHA)) };
  }, [meta, domainColor]);
  const { tracks, lanesH } = useMemo(() => {
    let top = PAD_TOP;
    const made: Made[] = [];
    for (const kind of TRACKS) {
      if (!shown.has(kind.id)) continue;
      const ctx: TrackContext = {
        run,
        meta,
        client,
        busy: colors.busy,
        idle: colors.idle,
        domainColor,
        theme,
        presenting,
        unfolded: unfolded.get(kind.id) ?? new Set(),
        unfold: (group) =>
          setUnfolded((m) => new Map(m).set(kind.id, new Set([...(m.get(kind.id) ?? []), group]))),
      };
      const track = kind.make(ctx);
      made.push({ kind, track, top });
      top += track.height + LANE_GAP;
    }
    return { tracks: made, lanesH: top };
  }, [run, meta, client, colors, domainColor, theme, presenting, unfolded, shown]);
  const axis = presenting ? AXIS_PRESENTING : AXIS;
  const tickRoom = presenting ? TICK_ROOM_PRESENTING : TICK_ROOM;
  const height = lanesH + axis.h;

  // The window of detail every track asks for (the one the column's other views share), at one column per pixel
  // of the view's width. React hears of it once per window, not per frame.
  const wanted = useDetailWindow(playhead, run, 'view', { visible });
  const w = usePlayhead(playhead, selectWidth, { visible });
  const resolution = Math.max(
    1,
    Math.round(((wanted.to_ns - wanted.from_ns) / 1e6 / Math.max(w, MIN_WINDOW_MS)) * width),
  );
  const query = useMemo(
    () =>
      width > 0
        ? async (): Promise<Answer> => {
            const answers = await Promise.all(tracks.map((m) => m.track.update(wanted, resolution)));
            return {
              runId: run.runId,
              window: wanted,
              data: new Map(tracks.map((m, i) => [m.kind.id, answers[i]])),
            };
          }
        : null,
    [tracks, wanted, resolution, width, run.runId],
  );
  const latest = useLatestQuery(query).value;
  // The last answer until the next comes, but never another run's (a column that changed policy).
  const answer = latest?.runId === run.runId ? latest : null;
  /** Each track's latest answer (of whatever window came last), or what it had at hand. */
  const dataOf = useCallback(
    (m: Made): unknown =>
      answer?.data.has(m.kind.id) ? answer.data.get(m.kind.id) : (m.track.initial ?? null),
    [answer],
  );
  const held = answer?.window ?? run.opening;
  const loading = windowKey(held) !== windowKey(wanted);
  const capMs = run.capNs / 1e6;

  useEffect(() => {
    onViewChangeRef.current = onViewChange;
  }, [onViewChange]);

  // Whole run -> full width; zoom transforms rescale this.
  const baseScale = useMemo(
    () => scaleLinear().domain([0, durationMs]).range([0, width]),
    [durationMs, width],
  );

  // The bands of the window's grid cell ([from, from + 4w]) are drawn once into an offscreen strip; each frame
  // only copies the visible part of it and draws the axis and playhead over it. So a view that follows the
  // playhead costs one drawImage and a few ticks per frame, and a band is redrawn once per window width or when
  // its track's answer changes (then only that band).
  const stripRef = useRef<{
    canvas: HTMLCanvasElement;
    geometry: readonly unknown[];
    drawn: Map<string, unknown>;
  } | null>(null);
  const viewAttrsAt = useRef(-Infinity);
  const viewAttrsShown = useRef(new Map<string, string>());
  const paint = useCallback(
    (s: PlayheadState) => {
      const canvas = canvasRef.current;
      const ctx = canvas?.getContext('2d');
      const { w, from } = gridOf(s.view);
      if (!canvas || !ctx || !(w > 0) || width <= 0) return;
      const [t0, t1] = s.view;
      const dpr = globalThis.devicePixelRatio || 1;
      const cw = Math.max(1, Math.round(width * dpr));
      const ch = Math.round(height * dpr);
      const sh = Math.round(lanesH * dpr);
      // Resizing a canvas reallocates and clears it: only when the size really changes.
      if (canvas.width !== cw) canvas.width = cw;
      if (canvas.height !== ch) canvas.height = ch;

      const geometry = [from, w, width, lanesH, dpr, tracks];
      const cached = stripRef.current;
      const fresh = !cached || cached.geometry.some((d, i) => d !== geometry[i]);
      const stale = tracks.filter((m) => fresh || cached.drawn.get(m.kind.id) !== dataOf(m));
      if (stale.length > 0) {
        const strip = cached?.canvas ?? document.createElement('canvas');
        const sw = STRIP_WIDTHS * width;
        if (fresh) {
          strip.width = Math.max(1, Math.round(sw * dpr));
          strip.height = sh;
        }
        const sctx = strip.getContext('2d');
        if (!sctx) return;
        const drawn = fresh ? new Map<string, unknown>() : cached.drawn;
        const k = width / w;
        const sx = (t: number) => Math.min(sw, Math.max(0, (t - from) * k));
        for (const m of stale) {
          // The band cleared on whole device pixels: its edges drawn anew, none left.
          sctx.setTransform(1, 0, 0, 1, 0, 0);
          const y0 = Math.floor(m.top * dpr);
          if (!fresh) sctx.clearRect(0, y0, strip.width, Math.ceil((m.top + m.track.height) * dpr) - y0);
          sctx.setTransform(dpr, 0, 0, dpr, 0, m.top * dpr);
          sctx.globalAlpha = 1;
          const data = dataOf(m);
          // An answer for the previous window is drawn where its times fall until this one's arrives.
          if (data !== null)
            m.track.render(
              { from, to: from + STRIP_WIDTHS * w, sx, width: sw, fill: canvasFill(sctx) },
              data,
            );
          sctx.globalAlpha = 1;
          drawn.set(m.kind.id, data);
        }
        stripRef.current = { canvas: strip, geometry, drawn };
      }
      const strip = stripRef.current!.canvas;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, cw, ch);
      const offset = Math.round((t0 - from) * (width / w) * dpr);
      ctx.drawImage(strip, offset, 0, cw, sh, 0, 0, cw, sh);

      // The time axis under the bands. No digit grouping: "1500", not "1,500" (the unit sits under the labels).
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const x = scaleLinear().domain([t0, t1]).range([0, width]);
      const n = Math.max(2, Math.floor(width / tickRoom));
      const tickFormat = x.tickFormat(n, '~f');
      ctx.fillStyle = AXIS_COLOR;
      ctx.fillRect(0, lanesH, width, 1);
      ctx.font = `${axis.labelPx}px ${fontFamily()}`;
      ctx.textBaseline = 'alphabetic';
      for (const t of x.ticks(n)) {
        const tx = x(t);
        ctx.fillStyle = AXIS_COLOR;
        ctx.fillRect(Math.round(tx) - 0.5, lanesH, 1, 4);
        const a = anchor(tx, width);
        ctx.textAlign = a === 'middle' ? 'center' : a;
        ctx.fillStyle = theme.muted;
        ctx.fillText(tickFormat(t), tx, lanesH + axis.baseline);
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

      // What the window on screen shows (test hooks): a few times a second while playing, so most playing
      // frames change nothing in the DOM.
      const now = performance.now();
      if (!s.playing || now - viewAttrsAt.current >= PLAYING_REFRESH_MS) {
        viewAttrsAt.current = now;
        for (const m of tracks)
          for (const [name, value] of Object.entries(m.track.viewAttrs?.(s.view, dataOf(m)) ?? {})) {
            const text = value === undefined ? '' : String(value);
            if (viewAttrsShown.current.get(name) === text) continue;
            viewAttrsShown.current.set(name, text);
            figureRef.current?.setAttribute(name, text);
          }
      }
    },
    [width, height, lanesH, tracks, dataOf, theme, axis, tickRoom],
  );
  usePlayheadEffect(playhead, paint, { visible });

  // The SVG export redraws the window on screen as shapes (lib/svgExport): every band with its track's own
  // drawing, the axis and the playhead, in the canvas's CSS pixels.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    return registerVector(canvas, () => {
      const { view: v, time } = playhead.get();
      const [t0, t1] = v;
      const x = scaleLinear().domain([t0, t1]).range([0, width]);
      const out: string[] = [];
      for (const m of tracks) {
        const data = dataOf(m);
        if (data === null) continue;
        const pen: Fill = (rx, ry, rw, rh, c, a = 1) => {
          const left = Math.max(0, rx);
          const right = Math.min(width, rx + rw);
          if (right > left)
            out.push(rect(left, m.top + ry, right - left, rh, c, a < 1 ? ` fill-opacity="${a}"` : ''));
        };
        m.track.render({ from: t0, to: t1, sx: (t) => x(t), width, fill: pen }, data);
      }
      out.push(rect(0, lanesH, width, 1, AXIS_COLOR));
      const n = Math.max(2, Math.floor(width / tickRoom));
      const format = x.tickFormat(n, '~f');
      for (const t of x.ticks(n)) {
        const tx = x(t);
        const a = anchor(tx, width);
        out.push(rect(Math.round(tx) - 0.5, lanesH, 1, 4, AXIS_COLOR));
        out.push(
          `<text x="${tx.toFixed(2)}" y="${lanesH + axis.baseline}" fill="${esc(theme.muted)}"` +
            ` font-size="${axis.labelPx}"` +
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
  }, [playhead, width, theme, tracks, dataOf, lanesH, axis, tickRoom]);

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

  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - box.left;
    const py = e.clientY - box.top;
    const m = tracks.find((b) => py >= b.top && py < b.top + b.track.height + LANE_GAP);
    const x = scaleLinear().domain(playhead.view).range([0, width]);
    const t = x.invert(px);
    const lines = m?.track.hover(
      { t, slack: x.invert(px + 4) - t, y: py - m.top, tAt: (at) => x.invert(at) },
      dataOf(m),
    );
    setHover(lines ? { x: px, y: py, lines } : null);
  };

  const attrs: Record<string, string | number | undefined> = {};
  for (const m of tracks) Object.assign(attrs, m.track.attrs?.(dataOf(m) as never));
  const zooms = tracks.map((m) => ({ id: m.kind.id, z: m.track.zoom?.(dataOf(m) as never) }));
  const aggregated = aggregatedText(zooms.filter((z) => z.z?.aggregated).map((z) => z.id));
  const full = zooms.some((z) => z.z?.full);
  return (
    <figure
      ref={figureRef}
      className={loading ? 'timeline loading-detail' : 'timeline'}
      data-testid="timeline"
      data-view="timeline"
      {...attrs}
      data-detail={loading ? 'loading' : 'held'}
    >
      <Legend
        meta={meta}
        full={full}
        aggregated={aggregated}
        optional={OPTIONAL}
        shown={shown}
        onToggle={toggle}
      />
      <div className="timeline-body">
        <div className="lane-labels" style={{ paddingTop: PAD_TOP }}>
          {tracks.map((m) => (
            <TrackLabels key={m.kind.id} labels={m.track.labels} />
          ))}
          <div className="unit">ms</div>
        </div>
        <div className="plot" ref={plotRef} style={{ height }}>
          <canvas
            ref={canvasRef}
            style={{ width, height }}
            // The size its labels are drawn at [CSS px] (a test hook: type on a canvas has no computed style).
            data-label-px={axis.labelPx}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setHover(null)}
            aria-label="Schedule per pCPU: scroll to zoom, drag to pan"
          />
          {loading && (
            <span className="detail-status muted" data-testid="detail-loading">
              loading detail…
            </span>
          )}
          <Tooltip hover={hover} width={width} />
        </div>
      </div>
      {/* Only when the view is wider than the longest window a run replays: its lanes then show part of it. */}
      {w > capMs && (
        <p className="muted trace-note" data-testid="detail-note">
          Detail replayed on demand from checkpoints, at most {fmt(capMs / 1000)} s at a time (held:{' '}
          {fmt(held.from_ns / 1e6)}–{fmt(held.to_ns / 1e6)} ms): zoom in past that for the schedule; shares,
          metrics and distributions cover the whole run.
        </p>
      )}
    </figure>
  );
}

/** The tracks the legend lets the reader turn on. */
const OPTIONAL = TRACKS.filter((k) => k.optional);

/** A track's labels, then the gap to the next band (a block that is not a div: `.lane-labels div` is a flex row). */
const TrackLabels = memo(function TrackLabels({ labels }: { labels: ReactNode }) {
  return (
    <>
      {labels}
      <span style={{ display: 'block', height: LANE_GAP }} />
    </>
  );
});
