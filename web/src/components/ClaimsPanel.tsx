import { memo } from 'react';
import type { ClaimResult } from '../sim/types';
import { claimValueLines } from '../lib/format';

interface Props {
  /** null while the runs are in flight. */
  readonly claims: readonly ClaimResult[] | null;
  /** Why the claims cannot be evaluated (a run failed). */
  readonly failed: string | null;
  readonly labelOf: (policy: string) => string;
}

/** The scenario's claims (what the paper says should happen) checked against all of its policies' runs. */
/** Memoised: it does not depend on the playhead, and the page re-renders on every playback frame. */
export const ClaimsPanel = memo(function ClaimsPanel({ claims, failed, labelOf }: Props) {
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
          {claims.map((c, i) => (
            <li
              key={i}
              data-testid="claim"
              data-holds={String(c.holds)}
              className={c.holds ? 'holds' : 'fails'}
            >
              <span className="verdict" aria-label={c.holds ? 'holds' : 'does not hold'}>
                {c.holds ? '✓' : '✗'}
              </span>
              <span className="claim-text">
                {c.text}
                {c.policy && <span className="muted"> ({labelOf(c.policy)})</span>}
              </span>
              <span className="claim-values">
                {claimValueLines(c.values).map((line) => (
                  <div key={line}>{line}</div>
                ))}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
});
