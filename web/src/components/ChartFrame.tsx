// The one frame the charts over the whole run share (CPU share, belief, Lag): figure, plot, axes, the chart's
// own marks, the playhead, a tooltip, and the legend under it. The marks come in as `children`, which the
// charts memoise: hovering or a legend update then re-renders the frame, never the hundreds of lines inside.
import { useState, type PointerEvent, type ReactNode, type RefObject } from 'react';
import type { ScaleLinear } from 'd3-scale';
import { pointerIn } from '../lib/hover';
import type { Playhead } from '../lib/playhead';
import { useVisible } from '../lib/useVisible';
import { PlayheadLine, RunAxes, type Margins } from './RunAxes';
import { Tooltip, type Hover } from './Tooltip';

/** Height of every chart over the run [px]. */
export const CHART_H = 150;
/** Shared by the charts over the run, so they line up one above the other. */
export const M: Margins = { top: 8, right: 8, bottom: 20, left: 40 };

interface Props {
  /** The figure's class, test id and data-/aria- attributes (what the tests and the stylesheet know it by). */
  readonly className: string;
  readonly testId: string;
  readonly data?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly plotClassName?: string;
  /** The plot element, whose width the chart measures (useWidth) for its x scale. */
  readonly plotRef: RefObject<HTMLDivElement | null>;
  readonly width: number;
  /** The svg's accessible name. */
  readonly label: string;
  readonly x: ScaleLinear<number, number>;
  readonly y: ScaleLinear<number, number>;
  readonly yFormat: (v: number) => string;
  readonly durationMs: number;
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
  plotRef,
  width,
  label,
  x,
  y,
  yFormat,
  durationMs,
  playhead,
  showView = false,
  describe,
  legend,
  children,
}: Props) {
  const [hover, setHover] = useState<Hover | null>(null);
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
            m={M}
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
            y1={M.top}
            y2={CHART_H - M.bottom}
          />
        </svg>
        {describe && <Tooltip hover={hover} width={width} />}
      </div>
      <figcaption className="legend">{legend}</figcaption>
    </figure>
  );
}
