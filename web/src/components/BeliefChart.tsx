// Task-aware scheduling's inference over time (paper 000 3.3, Fig. 5): each guest task's degree of belief as a
// step line, the BelThreshold above which a task counts as I/O-bound, and a mark for the partial boosts given
// (triangle) or revoked (cross) along the bottom, one per time bucket of the run's overview (narrower than a
// pixel; the legend counts them all). Policies that do not infer say so instead of drawing nothing.
import { useEffect, useMemo, useState } from 'react';
import { scaleLinear } from 'd3-scale';
import { curveStepAfter, line } from 'd3-shape';
import type { SimClient } from '../sim/client';
import type { Inference, Meta, RunResult } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { beliefAt, beliefSeries, nearestWithin, type BeliefSeries } from '../lib/belief';
import { fmt } from '../lib/format';
import { nearestIndex } from '../lib/hover';
import { selectTime, usePlayhead, type Playhead } from '../lib/playhead';
import { PLAYING_REFRESH_MS } from '../lib/useLatestQuery';
import { useVisible } from '../lib/useVisible';
import { CHART_H as HEIGHT, ChartFrame, M, useRunFrame } from './ChartFrame';
import { LineSwatch } from './LineSwatch';
/** Height of the band of partial-boost marks at the bottom of the plot [px]. */
const MARK_BAND = 12;
/** Most task lines drawn (the highest beliefs first); a note counts the rest. */
const TASKS_MAX = 8;
/** One dash per task within a domain, so two tasks of one domain keep its colour but differ in stroke. */
const DASHES = ['', '6 3', '2 2', '8 3 2 3'] as const;

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  readonly durationMs: number;
  readonly playhead: Playhead;
}

interface Line {
  readonly series: BeliefSeries;
  readonly name: string;
  readonly color: string;
  readonly dash: string;
}

/**
 * The series plus a flat line at 0 for every other task of a domain that has one: a task whose belief never moved
 * (a busy loop the inference never sees run briefly after an event) is the contrast the view is about.
 */
function withQuietTasks(series: BeliefSeries[], meta: Meta): BeliefSeries[] {
  const doms = new Set(series.map((s) => meta.tasks[s.task]?.domain));
  const have = new Set(series.map((s) => s.task));
  const quiet = meta.tasks.flatMap((t, i) =>
    doms.has(t.domain) && !have.has(i) ? [beliefSeries([{ t_ns: 0, task: i, belief: 0 }])[0]!] : [],
  );
  return [...series, ...quiet].sort((a, b) => a.task - b.task);
}

export function BeliefChart({ client, run, durationMs, playhead }: Props) {
  const domainColor = useDomainColor();
  const frame = useRunFrame(durationMs);
  const { plotRef: ref, width, x, m } = frame;
  const { meta, runId } = run;
  /** The answer for a run id: a new run shows "loading" until its own answer comes, never the last run's. */
  const [fetched, setFetched] = useState<{
    readonly runId: string;
    readonly inference: Inference | null;
    readonly error: string | null;
  } | null>(null);

  useEffect(() => {
    let live = true;
    client.query(runId, 'inference').then(
      (inf) => live && setFetched({ runId, inference: inf, error: null }),
      (e: unknown) =>
        live && setFetched({ runId, inference: null, error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [client, runId]);
  const mine = fetched?.runId === runId ? fetched : null;
  const inference = mine ? mine.inference : undefined;
  const error = mine?.error ?? null;

  const { lines, hidden: hiddenTasks } = useMemo<{ lines: Line[]; hidden: number }>(() => {
    if (!inference) return { lines: [], hidden: 0 };
    const all = withQuietTasks(beliefSeries(inference.beliefs), meta);
    const shown = [...all].sort((a, b) => b.peak - a.peak || a.task - b.task).slice(0, TASKS_MAX);
    shown.sort((a, b) => a.task - b.task);
    const perDomain = new Map<number, number>();
    const lines = shown.map((series) => {
      const task = meta.tasks[series.task];
      const dom = task?.domain ?? 0;
      const k = perDomain.get(dom) ?? 0;
      perDomain.set(dom, k + 1);
      return {
        series,
        name: task?.path ?? `task ${series.task}`,
        color: domainColor(meta.domains[dom]?.color_index ?? dom),
        dash: DASHES[k % DASHES.length]!,
      };
    });
    return { lines, hidden: all.length - lines.length };
  }, [inference, meta, domainColor]);

  const y = useMemo(() => {
    const thr = inference?.threshold ?? 0;
    let lo = Math.min(0, thr);
    let hi = Math.max(thr, 1);
    for (const l of lines)
      for (const b of l.series.belief) {
        lo = Math.min(lo, b);
        hi = Math.max(hi, b);
      }
    const pad = (hi - lo) * 0.08;
    return scaleLinear()
      .domain([lo - pad, hi + pad])
      .range([HEIGHT - M.bottom - MARK_BAND, M.top])
      .nice();
  }, [lines, inference]);

  const paths = useMemo(() => {
    const gen = line<readonly [number, number]>()
      .x((p) => x(p[0]))
      .y((p) => y(p[1]))
      .curve(curveStepAfter);
    return lines.map((l) => {
      const { t, belief } = l.series;
      const pts = Array.from(t, (ti, i) => [ti, belief[i]!] as const);
      pts.push([durationMs, belief[belief.length - 1] ?? 0]);
      return gen(pts) ?? '';
    });
  }, [lines, x, y, durationMs]);
  // The legend reads the beliefs at the playhead: a few times a second while playing, never off screen.
  const visible = useVisible(ref);
  const time = usePlayhead(playhead, selectTime, { playingMs: PLAYING_REFRESH_MS, visible });

  const boosts = useMemo(() => inference?.boosts ?? [], [inference]);
  const boostTimes = useMemo(() => Float64Array.from(boosts, (b) => b.t_ns / 1e6), [boosts]);
  const markY = HEIGHT - M.bottom - MARK_BAND / 2;
  const marks = useMemo(() => {
    let given = '';
    let revoked = '';
    let count = 0;
    boosts.forEach((b, i) => {
      const px = x(boostTimes[i]!);
      if (b.kind === 'boost') {
        count += b.count;
        given += `M${px - 4},${markY + 4}L${px},${markY - 4}L${px + 4},${markY + 4}Z`;
      } else
        revoked += `M${px - 3},${markY - 3}L${px + 3},${markY + 3}M${px - 3},${markY + 3}L${px + 3},${markY - 3}`;
    });
    return { given, revoked, count };
  }, [boosts, boostTimes, x, markY]);
  const given = marks.count;
  const thr = inference?.threshold ?? 0;

  // Memoised as elements: a legend update or a hover does not reconcile the lines.
  const drawn = useMemo(
    () => (
      <>
        <line
          className="threshold-line"
          data-testid="belief-threshold"
          x1={m.left}
          x2={width - M.right}
          y1={y(thr)}
          y2={y(thr)}
        />
        <text x={width - M.right - 2} y={y(thr) - 3} textAnchor="end" className="threshold-label">
          BelThreshold {thr}
        </text>
        {lines.map((l, i) => (
          <path
            key={l.series.task}
            className="belief-line"
            data-task={l.name}
            d={paths[i]}
            stroke={l.color}
            strokeDasharray={l.dash || undefined}
          />
        ))}
        <path className="boost-mark" data-testid="boost-marks" d={marks.given || undefined} />
        <path className="revoke-mark" d={marks.revoked || undefined} />
      </>
    ),
    [lines, paths, marks, width, y, thr, m.left],
  );

  if (inference === null) {
    return (
      <figure
        className="belief-chart"
        data-testid="belief-chart"
        data-view="belief-chart"
        data-infers="false"
      >
        <p className="muted belief-none">
          {error
            ? `Beliefs unavailable: ${error}`
            : 'This policy does not infer task types (no task-aware scheduling), so there are no beliefs to show.'}
        </p>
      </figure>
    );
  }

  const describe = (px: number, py: number): string[] | null => {
    const t = x.invert(px);
    if (px < m.left || px > width - M.right || t < 0) return null;
    if (py >= markY - MARK_BAND / 2 - 2 && py <= markY + MARK_BAND) {
      const i = nearestWithin(boostTimes, t, x.invert(px + 5) - t);
      const b = i >= 0 ? boosts[i] : undefined;
      if (b) {
        const vcpu = meta.vcpus[b.vcpu]?.name ?? `vCPU ${b.vcpu}`;
        const what = b.kind === 'boost' ? `partial boost of ${vcpu}` : `partial boost of ${vcpu} revoked`;
        // One mark stands for every mark of its kind within one time bucket of the run (narrower than a pixel).
        const more =
          b.count > 1
            ? ` and ${b.count - 1} more within ${fmt((inference?.bucket_ns ?? 0) / 1e6, 3)} ms`
            : '';
        return [
          what + more,
          b.kind === 'boost'
            ? 'an event is pending and the vCPU has an I/O-bound task'
            : 'its guest switched to a task that is not I/O-bound',
          `t = ${fmt(boostTimes[i]!, 6)} ms`,
        ];
      }
    }
    const best =
      lines[nearestIndex(lines.length, (i) => Math.abs(y(beliefAt(lines[i]!.series, t)) - py), 12)];
    if (!best) return null;
    const b = beliefAt(best.series, t);
    return [
      `${best.name}: belief ${b}`,
      b > thr ? `inferred I/O-bound (above ${thr})` : `not I/O-bound (threshold ${thr})`,
      `t = ${fmt(t, 6)} ms`,
    ];
  };

  return (
    <ChartFrame
      className="belief-chart"
      testId="belief-chart"
      data={{
        'data-view': 'belief-chart',
        'data-infers': 'true',
        'data-tasks': lines.length,
        'data-boosts': given,
        'aria-busy': inference === undefined,
      }}
      plotClassName="share-plot belief-plot"
      frame={frame}
      label="Degree of belief per task over time"
      y={y}
      yFormat={String}
      playhead={playhead}
      showView
      describe={describe}
      legend={
        <>
          {lines.map((l) => {
            const b = beliefAt(l.series, time);
            return (
              <span key={l.series.task} className="legend-item" data-task={l.name}>
                <LineSwatch color={l.color} dash={l.dash} width={22} />
                {l.name} {b}
                {b > thr && <b className="io-bound"> I/O-bound</b>}
              </span>
            );
          })}
          {hiddenTasks > 0 && <span className="legend-item muted">and {hiddenTasks} more tasks</span>}
          {inference && lines.length === 0 && (
            <span className="legend-item muted">No task has changed its degree of belief.</span>
          )}
          <span className="legend-item muted">
            belief at the playhead; dashed: BelThreshold; ▲ {given} partial boosts, ✕ revoked; ms
          </span>
        </>
      }
    >
      {drawn}
    </ChartFrame>
  );
}
