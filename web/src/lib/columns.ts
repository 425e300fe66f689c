// Column ids: a column shows a policy of the scenario ("pi"), or that policy on a claim's ablated scenario
// ("pi~w3": claim 3's `without` patch applied by the simulator). The id is what the share link's `policies=`
// carries, so an ablated column survives a reload. A third kind runs a scheduler of the registry that the
// scenario does not list, with its default parameters ("credit2~d"): the page adds it to the scenario as one
// more policy for that run only (see `registryPolicy`). A recorded trace opened from a file has a column of its
// own (`recordedColumnId`), which links do not carry.
import schemaText from '../../../scenarios/schema.json?raw';

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
  /** For a registry column: its scheduler, run with default parameters (`policy` is then the column id). */
  readonly scheduler?: string;
}

/**
 * The schedulers of the simulator's registry (the schema's list, kept equal to the registry by a Rust test) that
 * run with default parameters: not "script", whose source is its parameter (it comes from a template instead).
 */
export const SCHEDULERS: readonly string[] = (() => {
  const schema = JSON.parse(schemaText) as {
    $defs: { policy: { properties: { scheduler: { enum: string[] } } } };
  };
  return schema.$defs.policy.properties.scheduler.enum.filter((k) => k !== 'script');
})();

/** Marks a registry column: SCHEDULER~d. */
const DEFAULTS = '~d';

/** The column running `scheduler` of the registry with its default parameters. */
export function registryColumnId(scheduler: string): string {
  return `${scheduler}${DEFAULTS}`;
}

/** The policy a registry column adds to the scenario for its run (ids may not contain '~'). */
export function registryPolicy(scheduler: string): { id: string; label: string; scheduler: string } {
  return { id: `registry.${scheduler}`, label: `${scheduler} (defaults)`, scheduler };
}

/**
 * The column of the `n`th trace file opened on the page. Never carried by links (the file is not in them), so
 * never parsed; the '~' keeps it apart from every policy id.
 */
export function recordedColumnId(n: number): string {
  return `recorded~${n}`;
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
  if (id.endsWith(DEFAULTS)) {
    const scheduler = id.slice(0, -DEFAULTS.length);
    return SCHEDULERS.includes(scheduler) ? { policy: id, ablation: null, scheduler } : null;
  }
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
  if (ref.scheduler) return null;
  if (!policyIds.includes(ref.policy)) return `this scenario has no policy "${ref.policy}"`;
  if (ref.ablation !== null && !claims[ref.ablation]?.without)
    return `claim ${ref.ablation} of this scenario names no ablation ("${id}")`;
  return null;
}

/**
 * The columns with `id` inserted at `at`; when that makes more than `max`, the last other column gives way.
 */
export function insertColumn(columns: readonly string[], at: number, id: string, max: number): string[] {
  const next = [...columns.slice(0, at), id, ...columns.slice(at)];
  while (next.length > max) {
    let k = next.length - 1;
    if (next[k] === id) k--;
    next.splice(k, 1);
  }
  return next;
}

/**
 * What a claim's ablation switched off, for a column title: its label without the "in policy N" that the
 * scenario file adds (a 0-based index into its policies; the column already names the policy).
 */
export function ablationName(label: string): string {
  return label.replace(/\s+(?:in|for) (?:policy|policies) \d+(?:(?:,\s*|\s+and\s+)\d+)*\s*$/, '').trim();
}
