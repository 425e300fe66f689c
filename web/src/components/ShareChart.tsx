// Per-domain CPU share of the host over time (one line per domain) against each domain's fair share (dashed, same
// colour). D3 computes scales and paths; React renders the SVG.
import { useCallback, useMemo } from 'react';
import { max } from 'd3-array';
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { RunResult } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { bucketAt, shareColumns } from '../lib/series';
import { fmt, pct } from '../lib/format';
import { nearestIndex } from '../lib/hover';
import { fairShareLabel } from '../lib/fairness';
import { usePlayhead, type Playhead, type PlayheadState } from '../lib/playhead';
import { PLAYING_REFRESH_MS } from '../lib/useLatestQuery';
import { useVisible } from '../lib/useVisible';
import { CHART_H as HEIGHT, ChartFrame, M, useRunFrame } from './ChartFrame';

/** Beyond this many domains the per-domain legend gives way to the metrics table below. */
const LEGEND_MAX = 16;

interface Props {
  readonly run: RunResult;
  readonly durationMs: number;
  readonly playhead: Playhead;
}

export function ShareChart({ run, durationMs, playhead }: Props) {
  const domainColor = useDomainColor();
  const frame = useRunFrame(durationMs);
  const { plotRef: ref, width, x, m } = frame;
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
  const fairLabel = fairShareLabel(report.fairness?.basis, report.fairness?.rule);

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

  // The lines change with the data and the width only: memoised as elements, so a legend update or a hover
  // does not reconcile a hundred paths.
  const marks = useMemo(() => {
    const gen = line<number>()
      .x((_, i) => x((i + 0.5) * bucketMs))
      .y((v) => y(v));
    return (
      <>
        {meta.domains.map((d, i) =>
          Number.isFinite(fair[i]) ? (
            <line
              key={`fair-${d.name}`}
              className="fair-line"
              data-domain={d.name}
              x1={m.left}
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
            d={gen(Array.from(series[i] ?? [])) ?? ''}
            stroke={domainColor(d.color_index)}
          />
        ))}
      </>
    );
  }, [meta.domains, series, fair, x, y, bucketMs, width, domainColor, m.left]);

  /** Names the domain line nearest the pointer with its share in that bucket and its fair share. */
  const describe = (px: number, py: number): string[] | null => {
    const b = bucketAt(x.invert(px), bucketMs, buckets);
    if (px < m.left || px > width - M.right || b < 0) return null;
    const best = nearestIndex(series.length, (d) => Math.abs(y(series[d]?.[b] ?? 0) - py), 10);
    const dom = meta.domains[best];
    if (!dom) return null;
    return [
      `${dom.name}: ${pct(series[best]?.[b])} of the host`,
      `${fairLabel} ${pct(fair[best])}`,
      `${fmt(b * bucketMs, 6)} – ${fmt((b + 1) * bucketMs, 6)} ms`,
    ];
  };

  // The legend's figures are per bucket: re-render when the playhead crosses into another one.
  const bucketOf = useCallback(
    (s: PlayheadState) => bucketAt(s.time, bucketMs, buckets),
    [bucketMs, buckets],
  );
  // A few times a second while playing (nobody reads 60), none off screen.
  const visible = useVisible(ref);
  const at = usePlayhead(playhead, bucketOf, { playingMs: PLAYING_REFRESH_MS, visible });

  return (
    <ChartFrame
      className="share-chart"
      testId="share-chart"
      data={{ 'data-view': 'share-chart', 'data-domains': meta.domains.length }}
      frame={frame}
      label="CPU share per domain over time"
      y={y}
      yFormat={pct}
      playhead={playhead}
      showView
      describe={describe}
      legend={
        <>
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
          <span className="legend-item muted" data-testid="share-chart-fair-rule">
            share of host at the playhead; dashed: {fairLabel}; ms
          </span>
        </>
      }
    >
      {marks}
    </ChartFrame>
  );
}
