// Script policies in the page: a policy with `"scheduler": "script"` carries its Rhai source and
// its vars in `params`, so a scripted column is one more policy of the scenario and travels wherever a scenario
// edit does (the editor's drafts, the share link's patch). This file holds the pure parts: adding such a policy,
// replacing its source, and reading the simulator's messages back into a line and column for the editor.
import type { Json } from './share';

/** The scheduler id of a user-written policy. */
export const SCRIPT = 'script';

/** One of the simulator's script templates (`schedsim_core::policy::script::TEMPLATES`). */
export interface ScriptTemplate {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly source: string;
  /** The policy's `params.vars` the template starts with. */
  readonly vars: Readonly<Record<string, Json>>;
}

/** Where a script went wrong: a syntax error from `checkScript`, or a run's runtime error. */
export interface ScriptProblem {
  /** 1-based; null when the message names no line. */
  readonly line: number | null;
  /** 1-based; null when the message names no column. */
  readonly column: number | null;
  readonly message: string;
}

type JsonObject = { [key: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The scenario's policies as JSON objects (an empty list when it has none or is not a scenario). */
function policiesOf(doc: Json): JsonObject[] {
  return isObject(doc) && Array.isArray(doc.policies) ? doc.policies.filter(isObject) : [];
}

/** A scripted policy of a scenario, as the editor edits it. */
export interface ScriptPolicy {
  readonly id: string;
  readonly label: string;
  readonly source: string;
  readonly vars: Readonly<Record<string, Json>>;
}

/** The scenario's scripted policies, in file order. */
export function scriptPolicies(text: string): ScriptPolicy[] {
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch {
    return [];
  }
  return policiesOf(doc)
    .filter((p) => p.scheduler === SCRIPT && typeof p.id === 'string')
    .map((p) => {
      const params = isObject(p.params) ? p.params : {};
      return {
        id: p.id as string,
        label: typeof p.label === 'string' ? p.label : (p.id as string),
        source: typeof params.source === 'string' ? params.source : '',
        vars: isObject(params.vars) ? params.vars : {},
      };
    });
}

/** The first id `base`, `base-2`, `base-3`, ... that no policy of the scenario has. */
export function freshPolicyId(taken: readonly string[], base = 'script'): string {
  if (!taken.includes(base)) return base;
  for (let k = 2; ; k++) if (!taken.includes(`${base}-${k}`)) return `${base}-${k}`;
}

/**
 * The scenario text with one more policy running `template`'s script (a copy: editing it changes this policy
 * only), labelled `label`; returns the text and the new policy's id.
 */
export function addScriptPolicy(
  text: string,
  template: Pick<ScriptTemplate, 'source' | 'vars'>,
  label: string,
): { text: string; id: string } {
  const doc = JSON.parse(text) as Json;
  if (!isObject(doc)) throw new Error('the scenario is not a JSON object');
  const policies = Array.isArray(doc.policies) ? doc.policies : [];
  const id = freshPolicyId(policiesOf(doc).map((p) => String(p.id)));
  const policy: JsonObject = {
    id,
    label,
    scheduler: SCRIPT,
    params: { source: template.source, vars: { ...template.vars } },
  };
  return { text: stringify({ ...doc, policies: [...policies, policy] }), id };
}

/**
 * The scenario text with policy `id`'s script source (and its vars, when given) replaced; the text itself when
 * the scenario has no such scripted policy.
 */
export function setScript(
  text: string,
  id: string,
  source: string,
  vars?: Readonly<Record<string, Json>>,
): string {
  const doc = JSON.parse(text) as Json;
  if (!isObject(doc) || !Array.isArray(doc.policies)) return text;
  let found = false;
  const policies = doc.policies.map((p) => {
    if (!isObject(p) || p.id !== id || p.scheduler !== SCRIPT) return p;
    found = true;
    const params = isObject(p.params) ? p.params : {};
    return { ...p, params: { ...params, source, ...(vars ? { vars: { ...vars } } : {}) } };
  });
  return found ? stringify({ ...doc, policies }) : text;
}

/** The editor's layout of a scenario file (two spaces, a final newline), as the scenario editor writes it. */
function stringify(doc: Json): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

/**
 * The template a column's "Edit as script" starts from: one whose id names the column's scheduler (or ends it:
 * SEDF's is "edf"), else the fair-share one (Credit and its kin), else the first.
 */
export function templateFor(
  templates: readonly ScriptTemplate[],
  scheduler: string | undefined,
): ScriptTemplate | undefined {
  const by = (want: (id: string) => boolean) => templates.find((t) => want(t.id.toLowerCase()));
  return (
    (scheduler
      ? by((id) => id === scheduler || id.includes(scheduler) || scheduler.endsWith(id))
      : undefined) ??
    by((id) => id.includes('fair')) ??
    templates[0]
  );
}

/** `line L, column C: message` (checkScript's and the validation's form); the line alone when only it is named. */
const LINE_COLUMN = /line (\d+)(?:,? column (\d+))?/i;

/** A message that may name a script line (`line 12`, `line 3, column 7`) as a problem the editor can mark. */
export function scriptProblem(message: string): ScriptProblem {
  const m = LINE_COLUMN.exec(message);
  return {
    line: m ? Number(m[1]) : null,
    column: m && m[2] !== undefined ? Number(m[2]) : null,
    message,
  };
}

/**
 * The syntax error of policy `index`'s source in a scenario validation message
 * (`policies[1].params.source: line 4, column 9: ...`), or null when the message names none.
 */
export function sourceProblem(validation: string, index: number): ScriptProblem | null {
  const key = `policies[${index}].params.source:`;
  const at = validation.indexOf(key);
  if (at < 0) return null;
  const rest = validation.slice(at + key.length).trim();
  // The validation joins problems with "; " or new lines: this one ends at the next field path.
  const end = rest.search(/(?:;\s*|\n)(?:[a-z_]+(?:\[\d+\])?\.)*[a-z_]+(?:\[\d+\])?:/);
  return scriptProblem(end < 0 ? rest : rest.slice(0, end));
}

/** A character offset into `source` for a 1-based line and column, clamped into the text. */
export function offsetOf(source: string, line: number, column: number | null): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = source.indexOf('\n', at);
    if (nl < 0) return source.length;
    at = nl + 1;
  }
  const eol = source.indexOf('\n', at);
  const lineEnd = eol < 0 ? source.length : eol;
  return Math.min(lineEnd, at + Math.max(0, (column ?? 1) - 1));
}

/** A var's value from its input: numbers stay numbers, booleans booleans. */
export function varValue(old: Json, raw: string | boolean): Json {
  if (typeof old === 'boolean') return Boolean(raw);
  if (typeof old === 'number') {
    const n = Number(raw);
    return raw !== '' && Number.isFinite(n) ? n : old;
  }
  if (old !== null && typeof old === 'object') {
    // A list or map is edited as JSON; half-typed JSON keeps the old value until it parses.
    try {
      const v = JSON.parse(String(raw)) as Json;
      return v !== null && typeof v === 'object' ? v : old;
    } catch {
      return old;
    }
  }
  return String(raw);
}
