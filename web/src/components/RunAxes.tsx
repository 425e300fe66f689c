// The frame of a chart over the whole run (share, belief, Lag): y grid with labels, x ticks in ms, and, where the
// chart shows it, the timelines' window shaded. Drawn first, so the chart's lines and playhead sit on top.
import { memo } from 'react';
import type { ScaleLinear } from 'd3-scale';
import { anchor } from '../lib/format';
import { selectTime, selectView, usePlayhead, type Playhead } from '../lib/playhead';

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

/** The moving part of the frame: its own component, so a playing window redraws one rect, not the axes. */
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
  const [v0, v1] = usePlayhead(playhead, selectView, { visible });
  return (
    <rect className="view-window" x={x(v0)} width={Math.max(1, x(v1) - x(v0))} y={top} height={height} />
  );
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
      {y.ticks(4).map((t) => (
        <g key={t} transform={`translate(0, ${y(t)})`}>
          <line x1={m.left} x2={width - m.right} className="grid" />
          <text x={m.left - 4} dy="0.32em" textAnchor="end" className="tick">
            {yFormat(t)}
          </text>
        </g>
      ))}
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
 * The playhead as a vertical line from `y1` to `y2` at `x(time)`, clamped to [0, durationMs]. Re-renders on
 * every playhead move, alone: the chart around it does not.
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
  const time = usePlayhead(playhead, selectTime, { visible });
  const px = x(Math.min(Math.max(time, 0), durationMs));
  return <line className="playhead" x1={px} x2={px} y1={y1} y2={y2} />;
}
