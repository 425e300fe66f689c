import { useMemo } from 'react';
import type { RunResult, ScenarioPolicy } from '../sim/types';
import { splitSegments } from '../lib/series';
import { MetricsTable } from './MetricsTable';
import { ShareChart } from './ShareChart';
import { Timeline } from './Timeline';
import type { View } from '../lib/view';

interface Props {
  readonly policy: string;
  readonly policies: readonly ScenarioPolicy[];
  /** Undefined while the run is in flight. */
  readonly run: RunResult | undefined;
  /** Why the run will not come, if it failed. */
  readonly failed: string | null;
  readonly durationMs: number;
  readonly view: View;
  readonly time: number;
  readonly onViewChange: (view: View) => void;
  readonly onPolicyChange: (policy: string) => void;
}

export function PolicyColumn({
  policy,
  policies,
  run,
  failed,
  durationMs,
  view,
  time,
  onViewChange,
  onPolicyChange,
}: Props) {
  const lanes = useMemo(() => (run ? splitSegments(run.segments, run.meta.pcpus) : []), [run]);
  const label = policies.find((p) => p.id === policy)?.label ?? policy;
  return (
    <section className="policy-column" data-testid="policy-column" data-policy={policy} aria-label={label}>
      <header>
        <h2>{label}</h2>
        <select
          aria-label="Policy for this column"
          data-testid="policy-select"
          value={policy}
          onChange={(e) => onPolicyChange(e.target.value)}
        >
          {policies.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label ?? p.id}
            </option>
          ))}
        </select>
      </header>
      {run ? (
        <>
          <Timeline
            meta={run.meta}
            lanes={lanes}
            durationMs={durationMs}
            view={view}
            onViewChange={onViewChange}
            time={time}
          />
          <ShareChart run={run} durationMs={durationMs} view={view} time={time} />
          <MetricsTable meta={run.meta} report={run.report} />
        </>
      ) : (
        <p className="muted placeholder">{failed ? `No run: ${failed}` : 'Running…'}</p>
      )}
    </section>
  );
}
