// Per-domain CPU share of the host over time (one line per domain) against each domain's fair share (dashed, same
// colour). D3 computes scales and paths; React renders the SVG.
import { useMemo, useRef, useState, type PointerEvent } from 'react';
import { max } from 'd3-array';
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { RunResult } from '../sim/types';
import { domainColor } from '../lib/palette';
import { bucketAt, shareColumns } from '../lib/series';
import { fmt, pct } from '../lib/format';
import { nearestIndex, pointerIn } from '../lib/hover';
import { useWidth } from '../lib/useWidth';
import type { View } from '../lib/view';
import { RunAxes, type Margins } from './RunAxes';
import { Tooltip, type Hover } from './Tooltip';

const HEIGHT = 150;
/** Beyond this many domains the per-domain legend gives way to the metrics table below. */
const LEGEND_MAX = 16;
/** Shared with the belief chart, so the two line up one above the other. */
export const M: Margins = { top: 8, right: 8, bottom: 20, left: 40 };

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

  const [hover, setHover] = useState<Hover | null>(null);
  /** Names the domain line nearest the pointer with its share in that bucket and its fair share. */
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    const { px, py } = pointerIn(e);
    const b = bucketAt(x.invert(px), bucketMs, buckets);
    if (px < M.left || px > width - M.right || b < 0) {
      setHover(null);
      return;
    }
    const best = nearestIndex(series.length, (d) => Math.abs(y(series[d]?.[b] ?? 0) - py), 10);
    const dom = meta.domains[best];
    if (!dom) {
      setHover(null);
      return;
    }
    setHover({
      x: px,
      y: py,
      lines: [
        `${dom.name}: ${pct(series[best]?.[b])} of the host`,
        `fair share ${pct(fair[best])}`,
        `${fmt(b * bucketMs, 6)} – ${fmt((b + 1) * bucketMs, 6)} ms`,
      ],
    });
  };

  const at = bucketAt(time, bucketMs, buckets);
  const playX = x(Math.min(Math.max(time, 0), durationMs));

  return (
    <figure className="share-chart" data-testid="share-chart" data-domains={meta.domains.length}>
      <div ref={ref} className="share-plot">
        <svg
          width={width}
          height={HEIGHT}
          role="img"
          aria-label="CPU share per domain over time"
          onPointerMove={onPointerMove}
          onPointerLeave={() => setHover(null)}
        >
          <RunAxes x={x} y={y} width={width} height={HEIGHT} m={M} view={view} yFormat={pct} />
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
        <Tooltip hover={hover} width={width} />
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
