// Column ids: a column shows a policy of the scenario ("pi"), or that policy on a claim's ablated scenario
// ("pi~w3": claim 3's `without` patch applied by the simulator). The id is what the share link's `policies=`
// carries, so an ablated column survives a reload.

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** A scenario or policy id as links may carry it. */
export function isValidId(id: string): boolean {
  return ID.test(id);
}

/** What a column runs. */
export interface ColumnRef {
  /** The scenario's policy id. */
  readonly policy: string;
  /** Index of the claim whose ablation the column runs on, or null for the scenario itself. */
  readonly ablation: number | null;
}

/** Separates a policy id from its ablation; never part of a policy id (see `isValidId`). */
const SEP = '~w';
/** Claim indices a link may name: plain decimal, no sign or leading zeros. */
const INDEX = /^(0|[1-9][0-9]{0,3})$/;

/** The id of the column running `policy`, on claim `ablation`'s ablated scenario when given. */
export function columnId(policy: string, ablation: number | null = null): string {
  return ablation === null ? policy : `${policy}${SEP}${ablation}`;
}

/** Reads a column id; null when it is malformed (it must still be checked against the scenario). */
export function parseColumnId(id: string): ColumnRef | null {
  const at = id.indexOf(SEP);
  const policy = at < 0 ? id : id.slice(0, at);
  if (!isValidId(policy)) return null;
  if (at < 0) return { policy, ablation: null };
  const k = id.slice(at + SEP.length);
  return INDEX.test(k) ? { policy, ablation: Number(k) } : null;
}

/** The parts of a scenario's claims that columns need. */
export interface ClaimAblation {
  readonly without?: { readonly label: string };
}

/**
 * Why the column id does not fit a scenario with these policy ids and claims, or null when it does: the policy
 * must exist, and an ablated column's claim must name an ablation.
 */
export function columnProblem(
  id: string,
  policyIds: readonly string[],
  claims: readonly ClaimAblation[],
): string | null {
  const ref = parseColumnId(id);
  if (!ref) return `"${id}" is not a column id (a policy id, or POLICY~wK for claim K's ablation)`;
  if (!policyIds.includes(ref.policy)) return `this scenario has no policy "${ref.policy}"`;
  if (ref.ablation !== null && !claims[ref.ablation]?.without)
    return `claim ${ref.ablation} of this scenario names no ablation ("${id}")`;
  return null;
}
