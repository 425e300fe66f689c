// The frame of a chart over the whole run (share, belief): the zoomed window shaded, y grid with labels, x ticks
// in ms. Drawn first, so the chart's lines and playhead sit on top.
import type { ScaleLinear } from 'd3-scale';
import { anchor } from '../lib/format';
import type { View } from '../lib/view';

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
  /** The timelines' visible window [ms], shaded. */
  readonly view: View;
  readonly yFormat: (v: number) => string;
}

export function RunAxes({ x, y, width, height, m, view, yFormat }: Props) {
  const [v0, v1] = view;
  const n = Math.max(2, Math.floor(width / 100));
  const xFormat = x.tickFormat(n, '~f');
  return (
    <g className="run-axes">
      <rect
        className="view-window"
        x={x(v0)}
        width={Math.max(1, x(v1) - x(v0))}
        y={m.top}
        height={height - m.top - m.bottom}
      />
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
}
