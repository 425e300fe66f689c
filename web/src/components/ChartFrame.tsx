// The one frame the charts over the whole run share (CPU share, belief, Lag): figure, plot, axes, the chart's
// own marks, the playhead, a tooltip, and the legend under it. The marks come in as `children`, which the
// charts memoise: hovering or a legend update then re-renders the frame, never the hundreds of lines inside.
import {
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type PointerEvent,
  type ReactNode,
  type RefObject,
} from 'react';
import { scaleLinear, type ScaleLinear } from 'd3-scale';
import { pointerIn } from '../lib/hover';
import type { Playhead } from '../lib/playhead';
import { useVisible } from '../lib/useVisible';
import { useWidth } from '../lib/useWidth';
import { PlayheadLine, RunAxes, type Margins } from './RunAxes';
import { Tooltip, type Hover } from './Tooltip';

/** Height of every chart over the run [px]. */
export const CHART_H = 150;
/** Shared by the charts over the run, so they line up one above the other; `left` is the least left margin; a
 * chart whose y labels are wider (large type in presentation mode, long numbers) widens its own to fit them. */
export const M: Margins = { top: 8, right: 8, bottom: 20, left: 40 };
/** Room between a y label and the plot [px] (the label sits 4 px left of it). */
const LABEL_PAD = 8;

/** What every chart over the run measures the same way: its plot element, its width, time [ms] -> x [px]. */
export interface RunFrame {
  readonly plotRef: RefObject<HTMLDivElement | null>;
  readonly width: number;
  readonly x: ScaleLinear<number, number>;
  readonly durationMs: number;
  /** The margins, with the left one fitted to the y labels. */
  readonly m: Margins;
  /** Sets the left margin [px] (the frame measures its labels). */
  readonly setLeft: (left: number) => void;
}

/** The plot's width (kept current) and the x scale of a chart over `durationMs`. */
export function useRunFrame(durationMs: number): RunFrame {
  const plotRef = useRef<HTMLDivElement>(null);
  const width = useWidth(plotRef);
  const [left, setLeft] = useState(M.left);
  const m = useMemo(() => ({ ...M, left }), [left]);
  const x = useMemo(
    () =>
      scaleLinear()
        .domain([0, durationMs])
        .range([left, width - M.right]),
    [durationMs, width, left],
  );
  return { plotRef, width, x, durationMs, m, setLeft };
}

interface Props {
  /** The figure's class, test id and data-/aria- attributes (what the tests and the stylesheet know it by). */
  readonly className: string;
  readonly testId: string;
  readonly data?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly plotClassName?: string;
  readonly frame: RunFrame;
  /** The svg's accessible name. */
  readonly label: string;
  readonly y: ScaleLinear<number, number>;
  readonly yFormat: (v: number) => string;
  readonly playhead: Playhead;
  /** Shade the timelines' window (charts that sit beside a timeline). */
  readonly showView?: boolean;
  /** What is under the pointer at (px, py) in the plot, as tooltip lines; null for nothing. No tooltip if absent. */
  readonly describe?: (px: number, py: number) => readonly string[] | null;
  readonly legend: ReactNode;
  readonly children: ReactNode;
}

export function ChartFrame({
  className,
  testId,
  data,
  plotClassName = 'share-plot',
  frame,
  label,
  y,
  yFormat,
  playhead,
  showView = false,
  describe,
  legend,
  children,
}: Props) {
  const { plotRef, width, x, durationMs, m, setLeft } = frame;
  const [hover, setHover] = useState<Hover | null>(null);
  // The left margin fits the widest y label as drawn: measured after layout and again whenever the labels' box
  // changes size (presentation mode's type, new labels), so a label is never cut at the figure's edge.
  const svgRef = useRef<SVGSVGElement>(null);
  useLayoutEffect(() => {
    const svg = svgRef.current;
    if (!svg) return;
    const fit = () => {
      const labels = svg.querySelectorAll<SVGTextElement>('.y-tick');
      let widest = 0;
      for (const t of labels) widest = Math.max(widest, t.getBBox().width);
      setLeft(Math.max(M.left, Math.ceil(widest) + LABEL_PAD));
    };
    fit();
    if (typeof ResizeObserver !== 'function') return;
    const observer = new ResizeObserver(fit);
    const group = svg.querySelector('.y-ticks');
    if (group) observer.observe(group);
    return () => observer.disconnect();
  }, [y, yFormat, setLeft]);
  // Off screen, the playhead and the window stay put while playing (no render, no paint for nobody).
  const visible = useVisible(plotRef);
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    if (!describe) return;
    const { px, py } = pointerIn(e);
    const lines = describe(px, py);
    setHover(lines ? { x: px, y: py, lines } : null);
  };
  return (
    <figure className={className} data-testid={testId} {...data}>
      <div ref={plotRef} className={plotClassName}>
        <svg
          ref={svgRef}
          width={width}
          height={CHART_H}
          role="img"
          aria-label={label}
          onPointerMove={describe && onPointerMove}
          onPointerLeave={describe && (() => setHover(null))}
        >
          <RunAxes
            x={x}
            y={y}
            width={width}
            height={CHART_H}
            m={m}
            playhead={showView ? playhead : undefined}
            visible={visible}
            yFormat={yFormat}
          />
          {children}
          <PlayheadLine
            playhead={playhead}
            visible={visible}
            x={x}
            durationMs={durationMs}
            y1={m.top}
            y2={CHART_H - m.bottom}
          />
        </svg>
        {describe && <Tooltip hover={hover} width={width} />}
      </div>
      <figcaption className="legend">{legend}</figcaption>
    </figure>
  );
}
