// Per-domain CPU share of the host over time (one line per domain) against each domain's fair share (dashed, same
// colour). D3 computes scales and paths; React renders the SVG.
import { useMemo, useRef } from 'react';
import { max } from 'd3-array';
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { RunResult } from '../sim/types';
import { domainColor } from '../lib/palette';
import { bucketAt, shareColumns } from '../lib/series';
import { anchor, pct } from '../lib/format';
import { useWidth } from '../lib/useWidth';
import type { View } from '../lib/view';

const HEIGHT = 150;
/** Beyond this many domains the per-domain legend gives way to the metrics table below. */
const LEGEND_MAX = 16;
const M = { top: 8, right: 8, bottom: 20, left: 40 };

interface Props {
  readonly run: RunResult;
  readonly durationMs: number;
  readonly view: View;
  readonly time: number;
}

export function ShareChart({ run, durationMs, view, time }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const { meta, report, bucketMs } = run;

  const series = useMemo(
    () => shareColumns(run.shares, meta.domains.length),
    [run.shares, meta.domains.length],
  );
  const fair = useMemo(
    () => meta.domains.map((d) => report.domains[d.name]?.fair_share ?? Number.NaN),
    [meta.domains, report.domains],
  );
  const buckets = series[0]?.length ?? 0;

  const x = useMemo(
    () =>
      scaleLinear()
        .domain([0, durationMs])
        .range([M.left, width - M.right]),
    [durationMs, width],
  );
  const y = useMemo(() => {
    const top = Math.max(
      max(series, (s) => max(s)) ?? 0,
      max(fair, (f) => (Number.isFinite(f) ? f : 0)) ?? 0,
      0.05,
    );
    return scaleLinear()
      .domain([0, Math.min(1, top * 1.1)])
      .range([HEIGHT - M.bottom, M.top])
      .nice();
  }, [series, fair]);

  const paths = useMemo(() => {
    const gen = line<number>()
      .x((_, i) => x((i + 0.5) * bucketMs))
      .y((v) => y(v));
    return series.map((s) => gen(Array.from(s)) ?? '');
  }, [series, x, y, bucketMs]);

  const at = bucketAt(time, bucketMs, buckets);
  const playX = x(Math.min(Math.max(time, 0), durationMs));
  const [v0, v1] = view;
  const xTicks = x.ticks(Math.max(2, Math.floor(width / 100)));
  const xFormat = x.tickFormat(Math.max(2, Math.floor(width / 100)), '~f');

  return (
    <figure className="share-chart" data-testid="share-chart" data-domains={meta.domains.length}>
      <div ref={ref} className="share-plot">
        <svg width={width} height={HEIGHT} role="img" aria-label="CPU share per domain over time">
          <rect
            className="view-window"
            x={x(v0)}
            width={Math.max(1, x(v1) - x(v0))}
            y={M.top}
            height={HEIGHT - M.top - M.bottom}
          />
          {y.ticks(4).map((t) => (
            <g key={t} transform={`translate(0, ${y(t)})`}>
              <line x1={M.left} x2={width - M.right} className="grid" />
              <text x={M.left - 4} dy="0.32em" textAnchor="end" className="tick">
                {pct(t)}
              </text>
            </g>
          ))}
          {xTicks.map((t) => (
            <text
              key={t}
              x={x(t)}
              y={HEIGHT - 4}
              textAnchor={anchor(x(t) - M.left, width - M.left)}
              className="tick"
            >
              {xFormat(t)}
            </text>
          ))}
          {meta.domains.map((d, i) =>
            Number.isFinite(fair[i]) ? (
              <line
                key={`fair-${d.name}`}
                className="fair-line"
                data-domain={d.name}
                x1={M.left}
                x2={width - M.right}
                y1={y(fair[i]!)}
                y2={y(fair[i]!)}
                stroke={domainColor(d.color_index)}
              />
            ) : null,
          )}
          {meta.domains.map((d, i) => (
            <path
              key={d.name}
              className="share-line"
              data-domain={d.name}
              d={paths[i]}
              stroke={domainColor(d.color_index)}
            />
          ))}
          <line className="playhead" x1={playX} x2={playX} y1={M.top} y2={HEIGHT - M.bottom} />
        </svg>
      </div>
      <figcaption className="legend">
        {meta.domains.slice(0, LEGEND_MAX).map((d, i) => (
          <span key={d.name} className="legend-item">
            <span className="swatch" style={{ background: domainColor(d.color_index) }} />
            {d.name} {at >= 0 ? pct(series[i]?.[at]) : '–'}
            <span className="muted"> (fair {pct(fair[i])})</span>
          </span>
        ))}
        {meta.domains.length > LEGEND_MAX && (
          <span className="legend-item muted">and {meta.domains.length - LEGEND_MAX} more domains</span>
        )}
        <span className="legend-item muted">share of host at the playhead; dashed: fair share; ms</span>
      </figcaption>
    </figure>
  );
}
