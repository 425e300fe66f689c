// Every vCPU's Lag over time (paper 001, equation 1): the CPU a vCPU was entitled to (its domain's share split
// equally among its vCPUs) minus what it received; positive = behind. One line per vCPU in its domain's colour,
// so co-scheduled siblings move together while asynchronous ones drift apart. D3 computes scales and paths;
// React renders the SVG (same layout as ShareChart).
import { useEffect, useMemo, useRef, useState } from 'react';
import { extent } from 'd3-array';
import { scaleLinear } from 'd3-scale';
import { line } from 'd3-shape';
import type { SimClient } from '../sim/client';
import type { LagData, RunResult } from '../sim/types';
import { domainColor } from '../lib/palette';
import { anchor } from '../lib/format';
import { useWidth } from '../lib/useWidth';

const HEIGHT = 150;
const M = { top: 8, right: 8, bottom: 20, left: 40 };

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  readonly durationMs: number;
  readonly time: number;
}

export function LagChart({ client, run, durationMs, time }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const [lag, setLag] = useState<LagData | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    client.lag(run.runId).then(
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
  }, [run.meta.domains]);

  const x = useMemo(
    () =>
      scaleLinear()
        .domain([0, durationMs])
        .range([M.left, width - M.right]),
    [durationMs, width],
  );
  const y = useMemo(() => {
    const all = lag?.vcpus.flatMap((v) => v.lag_ns) ?? [];
    const [lo = 0, hi = 0] = extent(all);
    const bound = Math.max(Math.abs(lo), Math.abs(hi), 1e6) / 1e6;
    return scaleLinear()
      .domain([-bound * 1.1, bound * 1.1])
      .range([HEIGHT - M.bottom, M.top])
      .nice();
  }, [lag]);

  const paths = useMemo(() => {
    if (!lag) return [];
    return lag.vcpus.map((v) => {
      const gen = line<number>()
        .x((_, i) => x((v.t_ns[i] ?? 0) / 1e6))
        .y((l) => y(l / 1e6));
      return gen(v.lag_ns as number[]) ?? '';
    });
  }, [lag, x, y]);

  const worst = run.report.fairness?.max_abs_lag_ms;
  const playX = x(Math.min(Math.max(time, 0), durationMs));
  const xTicks = x.ticks(Math.max(2, Math.floor(width / 100)));
  const xFormat = x.tickFormat(Math.max(2, Math.floor(width / 100)), '~f');

  return (
    <figure className="share-chart lag-chart" data-testid="lag-chart" data-vcpus={lag?.vcpus.length ?? 0}>
      <div ref={ref} className="share-plot">
        <svg width={width} height={HEIGHT} role="img" aria-label="Lag of every vCPU over time">
          {y.ticks(4).map((t) => (
            <g key={t} transform={`translate(0, ${y(t)})`}>
              <line x1={M.left} x2={width - M.right} className="grid" />
              <text x={M.left - 4} dy="0.32em" textAnchor="end" className="tick">
                {t}
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
          {lag?.vcpus.map((v, i) => (
            <path
              key={v.name}
              className="share-line lag-line"
              data-vcpu={v.name}
              d={paths[i]}
              stroke={colorOf(v.domain)}
            />
          ))}
          <line className="playhead" x1={playX} x2={playX} y1={M.top} y2={HEIGHT - M.bottom} />
        </svg>
      </div>
      <figcaption className="legend">
        <span className="legend-item muted">
          {error
            ? `Lag unavailable: ${error}`
            : `Lag per vCPU [ms] (paper 001 eq. 1; above 0: behind its share); max |Lag| ${
                worst != null ? `${worst.toFixed(1)} ms` : '–'
              }`}
        </span>
      </figcaption>
    </figure>
  );
}
