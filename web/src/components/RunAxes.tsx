// The frame of a chart over the whole run (share, belief, Lag): y grid with labels, x ticks in ms, and, where the
// chart shows it, the timelines' window shaded. Drawn first, so the chart's lines and playhead sit on top.
import { memo, useCallback, useRef } from 'react';
import type { ScaleLinear } from 'd3-scale';
import { anchor } from '../lib/format';
import { usePlayheadEffect, type Playhead, type PlayheadState } from '../lib/playhead';

export interface Margins {
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
  readonly left: number;
}

interface Props {
  readonly x: ScaleLinear<number, number>;
  readonly y: ScaleLinear<number, number>;
  readonly width: number;
  readonly height: number;
  readonly m: Margins;
  /** Shades the timelines' visible window, which moves with it; none when absent. */
  readonly playhead?: Playhead;
  /** The chart is on screen: the window follows playback (off screen it catches up later). */
  readonly visible?: boolean;
  readonly yFormat: (v: number) => string;
}

/**
 * The moving part of the frame: the shaded window, moved by writing its attributes as the playhead store
 * changes, so a playing frame re-renders nothing.
 */
function ViewWindow({
  playhead,
  visible,
  x,
  top,
  height,
}: {
  playhead: Playhead;
  visible: boolean;
  x: Props['x'];
  top: number;
  height: number;
}) {
  const ref = useRef<SVGRectElement>(null);
  const draw = useCallback(
    ({ view: [v0, v1] }: PlayheadState) => {
      const x0 = String(x(v0));
      const w = String(Math.max(1, x(v1) - x(v0)));
      const rect = ref.current;
      // Unchanged attributes are not written: a window that does not move costs nothing.
      if (rect && rect.getAttribute('x') !== x0) rect.setAttribute('x', x0);
      if (rect && rect.getAttribute('width') !== w) rect.setAttribute('width', w);
    },
    [x],
  );
  usePlayheadEffect(playhead, draw, { visible });
  return <rect ref={ref} className="view-window" y={top} height={height} />;
}

/** Memoised: its inputs change with the width or the data, never with the playhead. */
export const RunAxes = memo(function RunAxes({
  x,
  y,
  width,
  height,
  m,
  playhead,
  visible = true,
  yFormat,
}: Props) {
  const n = Math.max(2, Math.floor(width / 100));
  const xFormat = x.tickFormat(n, '~f');
  return (
    <g className="run-axes">
      {playhead && (
        <ViewWindow
          playhead={playhead}
          visible={visible}
          x={x}
          top={m.top}
          height={height - m.top - m.bottom}
        />
      )}
      <g className="y-ticks">
        {y.ticks(4).map((t) => (
          <g key={t} transform={`translate(0, ${y(t)})`}>
            <line x1={m.left} x2={width - m.right} className="grid" />
            <text x={m.left - 4} dy="0.32em" textAnchor="end" className="tick y-tick">
              {yFormat(t)}
            </text>
          </g>
        ))}
      </g>
      {x.ticks(n).map((t) => (
        <text
          key={t}
          x={x(t)}
          y={height - 4}
          textAnchor={anchor(x(t) - m.left, width - m.left)}
          className="tick"
        >
          {xFormat(t)}
        </text>
      ))}
    </g>
  );
});

/**
 * The playhead as a vertical line from `y1` to `y2` at `x(time)`, clamped to [0, durationMs]. Moved by writing
 * its attributes as the playhead store changes: the chart around it, and the line itself, never re-render.
 */
export function PlayheadLine({
  playhead,
  visible = true,
  x,
  durationMs,
  y1,
  y2,
}: {
  playhead: Playhead;
  visible?: boolean;
  x: Props['x'];
  durationMs: number;
  y1: number;
  y2: number;
}) {
  const ref = useRef<SVGLineElement>(null);
  const draw = useCallback(
    ({ time }: PlayheadState) => {
      const px = String(x(Math.min(Math.max(time, 0), durationMs)));
      const line = ref.current;
      if (line && line.getAttribute('x1') !== px) {
        line.setAttribute('x1', px);
        line.setAttribute('x2', px);
      }
    },
    [x, durationMs],
  );
  usePlayheadEffect(playhead, draw, { visible });
  return <line ref={ref} className="playhead" y1={y1} y2={y2} />;
}
