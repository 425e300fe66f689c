import { Fragment, memo } from 'react';
import type { SimClient } from '../sim/client';
import type { RunOpening, RunResult, ScenarioPolicy } from '../sim/types';
import type { AblatedRun } from '../app/useScenarioRuns';
import { claimValueLines } from '../lib/format';
import { parseColumnId } from '../lib/columns';
import { COLUMN_VIEWS } from './views';
import type { View } from '../lib/view';
import type { Playhead } from '../lib/playhead';

export interface PolicyColumnProps {
  /** The column id: a policy id, or `POLICY~wK` for its run on claim K's ablation. */
  readonly policy: string;
  /** What the column shows, e.g. "TAVS, partial boosting off". */
  readonly label: string;
  /** For an ablated column: the claim judged on its ablated runs, once done. */
  readonly ablated?: AblatedRun;
  readonly policies: readonly ScenarioPolicy[];
  /** Undefined while the run is in flight. */
  readonly run: RunResult | undefined;
  /** The run's opening window, once the run in flight has passed it: drawn until the run is done. */
  readonly opening?: RunOpening;
  /** Why the run will not come, if it failed. */
  readonly failed: string | null;
  readonly durationMs: number;
  /** The shared playhead and time window: each view subscribes at the rate it draws them. */
  readonly playhead: Playhead;
  readonly onViewChange: (view: View) => void;
  readonly onPolicyChange: (policy: string) => void;
  readonly client: SimClient;
  /** Moves the shared playhead [ms]. */
  readonly onSeek: (time: number) => void;
  /** Removes this column; absent when it is the last one. */
  readonly onRemove?: () => void;
  /** Shown before the label: the column's number (its 1-4 shortcut). */
  readonly index: number;
  /** The column shows a recorded trace (app/useRecorded), not a run of the scenario: it has no policy to pick. */
  readonly recorded?: boolean;
  /** The column runs a scripted policy. */
  readonly scripted?: boolean;
  /** Its script was edited and the column is running it again (the last run stays until the new one is in). */
  readonly rerunning?: boolean;
  /** Opens the policy editor: on the column's script, or on a new scripted copy of the column. */
  readonly onEditScript?: () => void;
}

/** Memoised: while playing only the views subscribed to the playhead re-render, never the column. */
export const PolicyColumn = memo(function PolicyColumn({
  policy,
  label,
  ablated,
  policies,
  run,
  opening,
  failed,
  durationMs,
  playhead,
  onViewChange,
  onPolicyChange,
  client,
  onSeek,
  onRemove,
  index,
  scripted = false,
  recorded = false,
  rerunning = false,
  onEditScript,
}: PolicyColumnProps) {
  const plain = policies.some((p) => p.id === policy);
  const scheduler = parseColumnId(policy)?.scheduler;
  return (
    <section
      className="policy-column"
      data-testid="policy-column"
      data-policy={policy}
      data-scripted={scripted || undefined}
      data-recorded={recorded || undefined}
      data-run={run?.runId}
      data-rerunning={rerunning || undefined}
      aria-label={label}
    >
      <header>
        <h2>
          <span className="col-number" title={`Column ${index + 1}`}>
            {index + 1}
          </span>
          <span className="col-label" title={label}>
            {label}
          </span>
        </h2>
        {!recorded && (
          <select
            aria-label="Policy for this column"
            data-testid="policy-select"
            value={policy}
            onChange={(e) => onPolicyChange(e.target.value)}
          >
            {!plain && <option value={policy}>{label}</option>}
            {policies.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label ?? p.id}
              </option>
            ))}
          </select>
        )}
        {onEditScript && (
          <button
            type="button"
            className="edit-script"
            data-testid="edit-as-script"
            onClick={onEditScript}
            title={
              scripted
                ? 'Edit this column’s script'
                : 'A new column running this scheduler as a script you can edit (from its template)'
            }
          >
            {scripted ? 'Edit script' : 'Edit as script'}
          </button>
        )}
        {onRemove && (
          <button
            type="button"
            className="remove-column"
            data-testid="remove-column"
            onClick={onRemove}
            title="Remove this column"
            aria-label={`Remove column ${index + 1}`}
          >
            ×
          </button>
        )}
      </header>
      {scheduler && (
        <p className="ablation-note muted" data-testid="column-registry">
          Not in the scenario file: the {scheduler} scheduler with its default parameters.
          {ablated?.error ? ` It could not run: ${ablated.error}` : ''}
        </p>
      )}
      {recorded && (
        <p className="ablation-note muted" data-testid="column-recorded">
          A recorded trace: what the machine did, on the same playhead.
        </p>
      )}
      {!plain && !scheduler && !recorded && (
        <AblationNote
          label={ablated?.label ?? ''}
          claim={ablated?.claim ?? null}
          pending={ablated === undefined}
          error={ablated?.error ?? null}
        />
      )}
      {rerunning && run && (
        <p className="muted rerun-note" data-testid="column-rerunning">
          Running the edited script…
        </p>
      )}
      {run || (opening && !failed) ? (
        <>
          {/* One list for both, so a view drawn from the opening (the timeline) stays mounted when the run is in. */}
          {COLUMN_VIEWS.filter((v) => !(recorded && v.model)).map((v) => (
            <Fragment key={v.id}>
              {run
                ? v.render({ client, run, durationMs, playhead, onViewChange, onSeek })
                : v.early?.({ client, run: opening!, durationMs, playhead, onViewChange, onSeek })}
            </Fragment>
          ))}
          {!run && <p className="muted placeholder">Running…</p>}
        </>
      ) : failed ? (
        <p className="muted placeholder run-failed" data-testid="column-failed" role="alert">
          No run: {failed}
        </p>
      ) : (
        <p className="muted placeholder">Running…</p>
      )}
    </section>
  );
});

/** Under an ablated column's header: the claim it switches off, judged on the ablated runs. */
function AblationNote({
  label,
  claim,
  pending,
  error,
}: {
  label: string;
  claim: AblatedRun['claim'];
  pending: boolean;
  error: string | null;
}) {
  if (pending || error || !claim)
    return (
      <p className="ablation-note muted" data-testid="column-ablation">
        {error
          ? `No ablated run: ${error}`
          : pending
            ? 'Mechanism switched off: running and judging the claim…'
            : ''}
      </p>
    );
  return (
    <div
      className={`ablation-note ${claim.holds ? 'holds' : 'fails'}`}
      data-testid="column-ablation"
      data-holds={String(claim.holds)}
    >
      <strong>
        {claim.holds ? '✓ still holds' : '✗ fails'} with {label}:
      </strong>{' '}
      {claim.text}
      {claimValueLines(claim.values).map((line) => (
        <div key={line} className="claim-values">
          {line}
        </div>
      ))}
    </div>
  );
}
