import { memo } from 'react';
import type { ClaimResult, ScenarioClaim } from '../sim/types';
import type { AblatedRun } from '../app/useScenarioRuns';
import { claimValueLines } from '../lib/format';
import { columnId } from '../lib/columns';

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
}: Props) {
  const held = claims?.filter((c) => c.holds).length ?? 0;
  return (
    <section className="claims" data-testid="claims-panel" aria-busy={claims === null}>
      <h2>
        Claims{' '}
        {claims && claims.length > 0 && (
          <span className="muted">
            {held} of {claims.length} hold
          </span>
        )}
      </h2>
      {claims === null ? (
        <p className="muted">{failed ? 'Not evaluated: a run failed.' : 'Waiting for the runs…'}</p>
      ) : claims.length === 0 ? (
        <p className="muted">This scenario states no claims.</p>
      ) : (
        <ul>
          {claims.map((c, i) => {
            const s = stated[i];
            const notReproduced = (c.status ?? s?.status) === 'not_reproduced';
            const without = s?.without;
            const id = c.policy && without ? columnId(c.policy, i) : null;
            const off = id ? ablated[id] : undefined;
            return (
              <li
                key={i}
                data-testid="claim"
                data-holds={String(c.holds)}
                data-status={notReproduced ? 'not_reproduced' : undefined}
                className={notReproduced ? 'not-reproduced' : c.holds ? 'holds' : 'fails'}
              >
                <span className="verdict" aria-label={c.holds ? 'holds' : 'does not hold'}>
                  {c.holds ? '✓' : '✗'}
                </span>
                <span className="claim-text">
                  {notReproduced && (
                    <span className="badge" data-testid="claim-not-reproduced">
                      not reproduced
                    </span>
                  )}
                  {c.text}
                  {c.policy && <span className="muted"> ({labelOf(c.policy)})</span>}
                  {s?.paper && (
                    <span className="claim-paper" data-testid="claim-paper">
                      Paper: {s.paper}
                    </span>
                  )}
                  {notReproduced && s?.reason && <span className="claim-reason">Why not: {s.reason}</span>}
                  {without && id && c.policy && (
                    <span className="claim-without">
                      Fails without it ({without.label}).{' '}
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
                  {off?.claim && (
                    <span
                      className={`claim-ablated ${off.claim.holds ? 'holds' : 'fails'}`}
                      data-testid="claim-ablated"
                      data-holds={String(off.claim.holds)}
                    >
                      Switched off: {off.claim.holds ? '✓ still holds' : '✗ fails'} ·{' '}
                      {claimValueLines(off.claim.values).join(' · ')}
                    </span>
                  )}
                </span>
                <span className="claim-values">
                  {claimValueLines(c.values).map((line) => (
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
