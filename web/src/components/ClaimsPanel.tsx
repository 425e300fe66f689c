import { memo } from 'react';
import type { ClaimResult, ScenarioClaim } from '../sim/types';
import type { AblatedRun } from '../app/useScenarioRuns';
import { claimValueLines } from '../lib/format';
import { columnId } from '../lib/columns';
import {
  ablationWords,
  missingWords,
  verdictClass,
  verdictMark,
  verdictValueLines,
  verdictWords,
} from '../lib/verdict';

/** How the claim fared with its mechanism switched off: the verdict's reading, else the run's own judgement. */
function switchedOff(off: AblatedRun): 'fails' | 'still holds' | 'broken' {
  const ab = off.verdict?.without;
  if (ab && ab.broken > 0) return 'broken';
  if (ab) return ab.still_holds > 0 ? 'still holds' : 'fails';
  return off.claim?.holds ? 'still holds' : 'fails';
}

/** The words of [`switchedOff`], a broken ablation with what broke. */
function switchedOffWords(off: AblatedRun): string {
  switch (switchedOff(off)) {
    case 'broken': {
      const e = off.verdict?.without?.error ?? off.error;
      return `! the ablation is broken${e ? ` (${missingWords(e)})` : ''}`;
    }
    case 'still holds':
      return '✓ still holds';
    case 'fails':
      return '✗ fails';
  }
}

interface Props {
  /** null while the runs are in flight. */
  readonly claims: readonly ClaimResult[] | null;
  /** The scenario file's claims, in the same order: the paper's value, the ablation, a not-reproduced reason. */
  readonly stated: readonly ScenarioClaim[];
  /** Why the claims cannot be evaluated (a run failed). */
  readonly failed: string | null;
  readonly labelOf: (policy: string) => string;
  /** Ablated columns' outcomes by column id. */
  readonly ablated: Readonly<Record<string, AblatedRun>>;
  /** The column ids on screen. */
  readonly columns: readonly string[];
  /** Adds the column running `policy` on claim `k`'s ablation. */
  readonly onAblate: (k: number, policy: string) => void;
  /** Shows claim `k`'s policies (and its ablated run) as the columns. */
  readonly onShow?: (k: number) => void;
  /** The scenario was edited: the claims' texts and paper values were written for the original. */
  readonly stale?: boolean;
}

/** The scenario's claims (what the paper says should happen) checked against all of its policies' runs. */
/** Memoised: it does not depend on the playhead, and the page re-renders on every playback frame. */
export const ClaimsPanel = memo(function ClaimsPanel({
  claims,
  stated,
  failed,
  labelOf,
  ablated,
  columns,
  onAblate,
  onShow,
  stale = false,
}: Props) {
  const held = claims?.filter((c) => (c.verdict ? c.verdict.kind === 'holds' : c.holds)).length ?? 0;
  return (
    <section
      className={`claims${stale ? ' stale' : ''}`}
      data-testid="claims-panel"
      data-stale={stale || undefined}
      aria-busy={claims === null}
    >
      <h2>
        Claims{' '}
        {claims && claims.length > 0 && (
          <span className="muted">
            {held} of {claims.length} hold
          </span>
        )}
      </h2>
      {stale && (
        <p className="stale-note" data-testid="stale-note">
          The claims’ texts and the paper’s values were written for the library’s original; the verdicts are
          this scenario’s.
        </p>
      )}
      {claims === null ? (
        <p className="muted">{failed ? 'Not evaluated: a run failed.' : 'Waiting for the runs…'}</p>
      ) : claims.length === 0 ? (
        <p className="muted">This scenario states no claims.</p>
      ) : (
        <ul>
          {claims.map((c, i) => {
            const s = stated[i];
            const without = s?.without;
            const id = c.policy && without ? columnId(c.policy, i) : null;
            const off = id ? ablated[id] : undefined;
            // The simulator's verdict, with the ablation once its column ran; the page only words it.
            const v = off?.verdict ?? c.verdict;
            const notReproduced = v
              ? v.kind === 'not_reproduced'
              : (c.status ?? s?.status) === 'not_reproduced';
            const words = v ? verdictWords(v) : c.holds ? 'holds' : 'does not hold';
            const ablation = v ? ablationWords(v) : null;
            const values = c.verdict ? verdictValueLines(c.verdict) : claimValueLines(c.values);
            return (
              <li
                key={i}
                data-testid="claim"
                data-holds={String(c.holds)}
                data-status={notReproduced ? 'not_reproduced' : undefined}
                data-verdict={v?.kind}
                className={v ? verdictClass(v) : c.holds ? 'holds' : 'fails'}
              >
                <span className="verdict" aria-label={words}>
                  {v ? verdictMark(v) : c.holds ? '✓' : '✗'}
                </span>
                <span className="claim-text">
                  {c.text}
                  {c.policy && <span className="muted"> ({labelOf(c.policy)})</span>}
                  {onShow && (
                    <button
                      type="button"
                      className="claim-show"
                      data-testid="claim-show"
                      onClick={() => onShow(i)}
                      title="Show the policies this claim compares as the columns"
                    >
                      Show as columns
                    </button>
                  )}
                  <span className="claim-verdict" data-testid="claim-verdict">
                    {v?.kind === 'not_reproduced' ? (
                      <>
                        <span data-testid="claim-not-reproduced">not reproduced</span>: {v.reason}
                      </>
                    ) : (
                      words
                    )}
                  </span>
                  {s?.paper && (
                    <span className="claim-paper" data-testid="claim-paper">
                      Paper: {s.paper}
                    </span>
                  )}
                  {without && id && c.policy && (
                    <span className="claim-without">
                      {ablation ?? `Should fail without it (${without.label}).`}{' '}
                      <button
                        type="button"
                        data-testid="claim-ablate"
                        disabled={columns.includes(id)}
                        onClick={() => onAblate(i, c.policy!)}
                        title={`Add a column: ${labelOf(id)}, on the same playhead`}
                      >
                        {columns.includes(id) ? 'Shown as a column' : 'Show it switched off'}
                      </button>
                    </span>
                  )}
                  {off && (off.claim || off.verdict) && (
                    <span
                      className={`claim-ablated ${{ fails: 'fails', 'still holds': 'holds', broken: 'broken' }[switchedOff(off)]}`}
                      data-testid="claim-ablated"
                      data-holds={String(off.claim?.holds ?? false)}
                    >
                      Switched off: {switchedOffWords(off)}
                      {off.claim && ` · ${claimValueLines(off.claim.values).join(' · ')}`}
                    </span>
                  )}
                </span>
                <span className="claim-values">
                  {values.map((line) => (
                    <div key={line}>{line}</div>
                  ))}
                </span>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
});
