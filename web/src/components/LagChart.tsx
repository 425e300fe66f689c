// Every vCPU's Lag over time (paper 001, equation 1): the CPU a vCPU was entitled to (its domain's share split
// equally among its vCPUs) minus what it received; positive = behind. One line per vCPU in its domain's colour,
// so co-scheduled siblings move together while asynchronous ones drift apart. D3 computes scales and paths;
// React renders the SVG (same layout as ShareChart).
import { useEffect, useMemo, useState } from 'react';
import { extent } from 'd3-array';
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { SimClient } from '../sim/client';
import type { LagData, RunResult } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import type { Playhead } from '../lib/playhead';
import { CHART_H as HEIGHT, ChartFrame, M, useRunFrame } from './ChartFrame';

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  readonly durationMs: number;
  readonly playhead: Playhead;
}

export function LagChart({ client, run, durationMs, playhead }: Props) {
  const domainColor = useDomainColor();
  const frame = useRunFrame(durationMs);
  const { x } = frame;
  const [lag, setLag] = useState<LagData | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    client.query(run.runId, 'lag').then(
      (d) => {
        if (live) setLag(d);
      },
      (e: unknown) => {
        if (live) setError(e instanceof Error ? e.message : String(e));
      },
    );
    return () => {
      live = false;
    };
  }, [client, run.runId]);

  const colorOf = useMemo(() => {
    const byName = new Map(run.meta.domains.map((d) => [d.name, domainColor(d.color_index)]));
    return (domain: string) => byName.get(domain) ?? 'currentColor';
  }, [run.meta.domains, domainColor]);

  const y = useMemo(() => {
    const all = lag?.vcpus.flatMap((v) => v.lag_ns) ?? [];
    const [lo = 0, hi = 0] = extent(all);
    const bound = Math.max(Math.abs(lo), Math.abs(hi), 1e6) / 1e6;
    return scaleLinear()
      .domain([-bound * 1.1, bound * 1.1])
      .range([HEIGHT - M.bottom, M.top])
      .nice();
  }, [lag]);

  // Memoised as elements: the frame re-renders, the lines only when the data or the width change.
  const lines = useMemo(
    () =>
      lag?.vcpus.map((v) => {
        const gen = line<number>()
          .x((_, i) => x((v.t_ns[i] ?? 0) / 1e6))
          .y((l) => y(l / 1e6));
        return (
          <path
            key={v.name}
            className="share-line lag-line"
            data-vcpu={v.name}
            d={gen(v.lag_ns as number[]) ?? ''}
            stroke={colorOf(v.domain)}
          />
        );
      }),
    [lag, x, y, colorOf],
  );

  const worst = run.report.fairness?.max_abs_lag_ms;
  return (
    <ChartFrame
      className="share-chart lag-chart"
      testId="lag-chart"
      data={{ 'data-view': 'lag-chart', 'data-vcpus': lag?.vcpus.length ?? 0 }}
      frame={frame}
      label="Lag of every vCPU over time"
      y={y}
      yFormat={String}
      playhead={playhead}
      legend={
        <span className="legend-item muted">
          {error
            ? `Lag unavailable: ${error}`
            : `Lag per vCPU [ms] (paper 001 eq. 1; above 0: behind its share); max |Lag| ${
                worst != null ? `${worst.toFixed(1)} ms` : '–'
              }`}
        </span>
      }
    >
      {lines}
    </ChartFrame>
  );
}
