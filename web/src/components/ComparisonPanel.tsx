// Under the columns: every shown policy's response-time CDF per server domain on one log-scaled chart (paper
// 000 Fig. 1a / 10a), and a table of event latency and throughput per domain and policy.
import { memo, type PointerEvent, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { scaleLinear, scaleLog } from 'd3-scale';
import { curveStepAfter, line } from 'd3-shape';
import type { SimClient } from '../sim/client';
import type { RunResult } from '../sim/types';
import { summaryColumns } from '../lib/summary';
import { PresentingContext, useDomainColor } from '../lib/theme';
import { cdfAt, cdfFromPairs, logDomain, type CdfPoint } from '../lib/cdf';
import { fmt } from '../lib/format';
import { useWidth } from '../lib/useWidth';
import { Terms } from './Reference';
import { nearestIndex, pointerIn } from '../lib/hover';
import { LineSwatch } from './LineSwatch';
import { Tooltip, type Hover } from './Tooltip';

const HEIGHT = 240;
const M_SCREEN = { top: 10, right: 14, bottom: 34, left: 44 };
/** Presentation mode's 18 px ticks need room beside and under the plot, and past its last tick. */
const M_PRESENTING = { top: 12, right: 28, bottom: 46, left: 68 };
/** One dash pattern per column, so the same domain under two policies keeps its colour but not its stroke. */
const DASHES = ['', '7 4', '2 3', '9 3 2 3'] as const;
/** Most lines the legend names; hovering a line names the rest. */
const LEGEND_MAX = 24;

export interface ComparedRun {
  readonly policy: string;
  readonly label: string;
  readonly run: RunResult;
  /** A recorded trace's column (app/useRecorded), not a run of the scenario. */
  readonly recorded?: boolean;
}

interface Props {
  readonly client: SimClient;
  readonly runs: readonly ComparedRun[];
}

interface Curve {
  readonly key: string;
  readonly policy: string;
  readonly label: string;
  readonly domain: string;
  readonly color: string;
  readonly dash: string;
  readonly points: readonly CdfPoint[];
}

/** Domains that served requests in a run, as indices into its meta.domains. */
function serverDomains(run: RunResult): number[] {
  return run.meta.domains.flatMap((d, i) =>
    (run.report.domains[d.name]?.response_ms?.count ?? 0) > 0 ? [i] : [],
  );
}

/** What a CDF chart plots: the server domains' response times, or every domain's wake-to-run latency. */
const CDF_KINDS = {
  response: {
    title: 'Response time CDF (server domains)',
    aria: 'Response-time CDF per policy and domain',
    within: 'of responses within',
    axis: 'response time [ms, log scale]',
    none: 'No domain in these runs serves requests, so there are no response times to compare.',
    domains: serverDomains,
  },
  wake_to_run: {
    title: 'Wake-to-run CDF (recorded and simulated)',
    aria: 'Wake-to-run latency CDF per run and domain',
    within: 'of wake-ups ran within',
    axis: 'wake-to-run latency [ms, log scale]',
    none: 'No domain in these runs woke up and then ran.',
    domains: (run: RunResult) => run.meta.domains.map((_, i) => i),
  },
} as const;

function CdfChart({
  client,
  runs,
  testId,
  kind = 'response',
}: Props & { testId: string; kind?: keyof typeof CDF_KINDS }) {
  const K = CDF_KINDS[kind];
  const domainColor = useDomainColor();
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const [curves, setCurves] = useState<readonly Curve[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [hover, setHover] = useState<Hover | null>(null);

  useEffect(() => {
    let live = true;
    const jobs = runs.flatMap((c, k) =>
      K.domains(c.run).map(async (d): Promise<Curve> => {
        const domain = c.run.meta.domains[d]!;
        const pairs = await client.query(c.run.runId, 'distribution', d, kind);
        return {
          key: `${c.policy}/${domain.name}`,
          policy: c.policy,
          label: c.label,
          domain: domain.name,
          color: domainColor(domain.color_index),
          dash: DASHES[k % DASHES.length]!,
          points: cdfFromPairs(pairs),
        };
      }),
    );
    Promise.all(jobs).then(
      (all) => {
        if (!live) return;
        setCurves(all.filter((c) => c.points.length > 0));
        setError(null);
      },
      (e: unknown) => {
        if (!live) return;
        setCurves(null);
        setError(e instanceof Error ? e.message : String(e));
      },
    );
    return () => {
      live = false;
    };
  }, [client, runs, domainColor, kind, K]);

  const M = useContext(PresentingContext) ? M_PRESENTING : M_SCREEN;
  const x = useMemo(
    () =>
      scaleLog()
        .domain(logDomain((curves ?? []).flatMap((c) => c.points.map((p) => p.x))))
        .range([M.left, Math.max(M.left + 1, width - M.right)]),
    [curves, width, M],
  );
  const y = useMemo(
    () =>
      scaleLinear()
        .domain([0, 1])
        .range([HEIGHT - M.bottom, M.top]),
    [M],
  );
  const paths = useMemo(() => {
    const gen = line<CdfPoint>()
      .x((p) => x(p.x))
      .y((p) => y(p.y))
      .curve(curveStepAfter);
    return (curves ?? []).map((c) => gen([...c.points, { x: x.domain()[1]!, y: 1 }]) ?? '');
  }, [curves, x, y]);

  /** Names the curve nearest the pointer and reads it: "90% of responses within 12 ms". */
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    const { px, py } = pointerIn(e);
    if (px < M.left || px > width - M.right) {
      setHover(null);
      return;
    }
    const v = x.invert(px);
    const all = curves ?? [];
    const best = all[nearestIndex(all.length, (i) => Math.abs(y(cdfAt(all[i]!.points, v)) - py), 10)];
    if (!best) {
      setHover(null);
      return;
    }
    const f = cdfAt(best.points, v);
    setHover({
      x: px,
      y: py,
      lines: [
        `${best.label} · ${best.domain}`,
        `${(f * 100).toFixed(1)}% ${K.within} ${fmt(v)} ms`,
        `median ${fmt(best.points.find((p) => p.y >= 0.5)?.x)} ms`,
      ],
    });
  };

  const [d0, d1] = x.domain() as [number, number];
  const decades: number[] = [];
  for (let t = d0; t <= d1 * 1.0001; t *= 10) decades.push(t);

  return (
    <figure className="cdf" data-testid={testId} data-lines={curves?.length ?? 0} aria-busy={curves === null}>
      <h3>{K.title}</h3>
      {/* An empty plot would only take room from the tables: say why there is no curve instead. */}
      <div ref={ref} className="cdf-plot" hidden={curves?.length === 0}>
        <svg
          width={width}
          height={HEIGHT}
          role="img"
          aria-label={K.aria}
          onPointerMove={onPointerMove}
          onPointerLeave={() => setHover(null)}
        >
          {[0, 0.25, 0.5, 0.75, 1].map((t) => (
            <g key={t} transform={`translate(0, ${y(t)})`}>
              <line x1={M.left} x2={width - M.right} className="grid" />
              <text x={M.left - 4} dy="0.32em" textAnchor="end" className="tick">
                {t}
              </text>
            </g>
          ))}
          {decades.map((t) => (
            <g key={t} transform={`translate(${x(t)}, 0)`}>
              <line y1={M.top} y2={HEIGHT - M.bottom} className="grid" />
              <text y={HEIGHT - M.bottom + (M === M_SCREEN ? 13 : 20)} textAnchor="middle" className="tick">
                {fmt(t)}
              </text>
            </g>
          ))}
          <text x={(M.left + width - M.right) / 2} y={HEIGHT - 4} textAnchor="middle" className="axis-label">
            {K.axis}
          </text>
          <text
            transform={`translate(${M === M_SCREEN ? 11 : 18}, ${(M.top + HEIGHT - M.bottom) / 2}) rotate(-90)`}
            textAnchor="middle"
            className="axis-label"
          >
            fraction ≤ x
          </text>
          {(curves ?? []).map((c, i) => (
            <path
              key={c.key}
              className="cdf-line"
              data-policy={c.policy}
              data-domain={c.domain}
              d={paths[i]}
              stroke={c.color}
              strokeDasharray={c.dash || undefined}
            >
              <title>
                {c.label} · {c.domain}
              </title>
            </path>
          ))}
        </svg>
        <Tooltip hover={hover} width={width} />
      </div>
      {error && <p className="muted">Distributions unavailable: {error}</p>}
      {curves && curves.length === 0 && <p className="muted">{K.none}</p>}
      <figcaption className="legend">
        {(curves ?? []).slice(0, LEGEND_MAX).map((c) => (
          <span key={c.key} className="legend-item">
            <LineSwatch color={c.color} dash={c.dash} />
            {c.label} · {c.domain}
          </span>
        ))}
        {curves && curves.length > LEGEND_MAX && (
          <span className="legend-item muted">and {curves.length - LEGEND_MAX} more (hover a line)</span>
        )}
      </figcaption>
    </figure>
  );
}

function LatencyTable({ runs }: { runs: readonly ComparedRun[] }) {
  const domainColor = useDomainColor();
  const domains = runs[0]?.run.meta.domains ?? [];
  const rows = domains.flatMap((d) =>
    runs.flatMap((c) => {
      const r = c.run.report.domains[d.name];
      const ev = r?.event_latency_ms;
      const tp = Object.entries(r?.throughput ?? {});
      if ((!ev || ev.count === 0) && tp.length === 0) return [];
      return [{ domain: d, c, ev: ev && ev.count > 0 ? ev : undefined, tp }];
    }),
  );
  return (
    // Focusable so keyboard users can scroll it (axe: scrollable-region-focusable).
    <div className="metrics-scroll latency-scroll" tabIndex={0} role="region" aria-label="Latency table">
      <table className="metrics" data-testid="latency-table">
        <thead>
          <tr>
            <th>domain</th>
            <th>policy</th>
            <th title="event pending until the vCPU runs [ms]">mean</th>
            <th>p99</th>
            <th>max</th>
            <th>throughput</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ domain, c, ev, tp }, i) => (
            <tr
              key={`${domain.name}/${c.policy}`}
              className={rows[i - 1]?.domain !== domain ? 'group' : undefined}
            >
              <td>
                {rows[i - 1]?.domain !== domain && (
                  <>
                    <span className="swatch" style={{ background: domainColor(domain.color_index) }} />
                    {domain.name}
                  </>
                )}
              </td>
              <td>{c.label}</td>
              <td>{fmt(ev?.mean)}</td>
              <td>{fmt(ev?.p99)}</td>
              <td>{fmt(ev?.max)}</td>
              <td>
                {tp.length === 0
                  ? '–'
                  : tp
                      .map(([k, v]) => `${fmt(v, 4)} ${k.replace(/_per_s$/, '/s').replace(/_/g, ' ')}`)
                      .join(', ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SummaryTable({ runs }: { runs: readonly ComparedRun[] }) {
  const cols = summaryColumns(runs.map((c) => c.run.report));
  if (cols.length === 0) return null;
  // Each term's first use in the table links to the glossary (Jain, Lag, PBHR, partial boosts).
  const seen = new Set<string>();
  return (
    <div className="metrics-scroll">
      <table className="metrics" data-testid="summary-table">
        <thead>
          <tr>
            <th>policy</th>
            {cols.map((c) => (
              <th key={c.key} title={c.title}>
                <Terms text={c.head} seen={seen} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.policy} data-policy={r.policy}>
              <td>{r.label}</td>
              {cols.map((c) => (
                <td key={c.key} data-metric={c.key}>
                  {fmt(c.value(r.run.report), c.digits ?? 3)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Memoised: it does not depend on the playhead, and the page re-renders on every playback frame. */
export const ComparisonPanel = memo(function ComparisonPanel({ client, runs }: Props) {
  return (
    <section className="comparison" data-testid="comparison-panel">
      <h2>Comparison</h2>
      {runs.length === 0 ? (
        <p className="muted">Waiting for the runs…</p>
      ) : (
        <div className="comparison-body">
          <div>
            <CdfChart testId="cdf-chart" client={client} runs={runs.filter((c) => !c.recorded)} />
            {runs.some((c) => c.recorded) && (
              <CdfChart testId="wake-cdf-chart" client={client} runs={runs} kind="wake_to_run" />
            )}
          </div>
          <div>
            <h3>Fairness and whole-run figures</h3>
            <SummaryTable runs={runs} />
            <h3>Event latency [ms] and throughput</h3>
            <LatencyTable runs={runs} />
          </div>
        </div>
      )}
    </section>
  );
});
