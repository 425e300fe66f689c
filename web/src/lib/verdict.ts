// A claim's verdict (the simulator's `claims::verdict`) in plain words: the page decides nothing about a claim,
// it says what the verdict says. Each kind has its words, a mark, and the numbers it rests on.
import type { Values, Verdict } from '../sim/types';
import { fmt } from './format';

/** The verdict kinds, as the simulator tags them. */
export type VerdictKind = Verdict['kind'];

/** Why a number is missing, in words: the simulator's reason, led by what is missing. */
export function missingWords(error: string): string {
  return /^no [a-z_ ]+:/.test(error) ? error : `no value: ${error}`;
}

/** The verdict in plain words ("holds", "does not hold", "not reproduced: why", ...). */
export function verdictWords(v: Verdict): string {
  const mechanism = v.without?.label ?? 'its mechanism';
  switch (v.kind) {
    case 'holds':
      return 'holds';
    case 'fails':
      return v.error ? `does not hold (${missingWords(v.error)})` : 'does not hold';
    case 'not_credited':
      return `holds, but also without ${mechanism} (not credited)`;
    case 'ablation_broken':
      return `ablation broken: ${v.ablation_error}`;
    case 'not_reproduced':
      return `not reproduced: ${v.reason}`;
    case 'stale':
      return `status out of date: ${v.why}`;
    case 'goal':
      return v.met ? 'goal met' : 'goal not met yet';
  }
}

/** The mark beside a claim: a tick only where it holds, a cross where it fails, else a neutral sign. */
export function verdictMark(v: Verdict): string {
  switch (v.kind) {
    case 'holds':
      return '✓';
    case 'goal':
      return v.met ? '✓' : '○';
    case 'fails':
      return '✗';
    case 'not_reproduced':
      return '○';
    case 'not_credited':
    case 'ablation_broken':
    case 'stale':
      return '!';
  }
}

/** The class the claim's row takes: holds, fails (anything the check fails), or a finding kept aside. */
export function verdictClass(v: Verdict): 'holds' | 'fails' | 'not-reproduced' {
  switch (v.kind) {
    case 'holds':
      return 'holds';
    case 'goal':
      return v.met ? 'holds' : 'not-reproduced';
    case 'not_reproduced':
      return 'not-reproduced';
    default:
      return 'fails';
  }
}

function number(x: number | null): string {
  return x === null || !Number.isFinite(x) ? 'no value (not a number)' : fmt(x, 4);
}

/** One line per run the claim read (`policy: path = value, ...`), then its targets and its bound. */
export function valueLines(values: Values): string[] {
  const pairs = (m: Readonly<Record<string, number | null>>) =>
    Object.entries(m)
      .map(([path, x]) => `${path} = ${number(x)}`)
      .join(', ');
  const lines = Object.entries(values.runs).map(([policy, m]) => `${policy}: ${pairs(m)}`);
  if (values.target) lines.push(`target: ${pairs(values.target)}`);
  if (values.bound !== undefined) lines.push(`bound on the factor = ${number(values.bound)}`);
  return lines;
}

/** The numbers a verdict rests on, or why they are missing. */
export function verdictValueLines(v: Verdict): string[] {
  if (v.values) return valueLines(v.values);
  return v.error ? [missingWords(v.error)] : [];
}

/** The ablation's line: not run yet, what it showed, or why it broke. */
export function ablationWords(v: Verdict): string | null {
  const ab = v.without;
  if (!ab) return null;
  if (ab.judged === 0) return `Should fail without it (${ab.label}); not run here yet.`;
  if (ab.broken > 0) return `Ablation broken (${ab.label})${ab.error ? `: ${ab.error}` : ''}.`;
  if (ab.still_holds > 0) return `Still holds without it (${ab.label}): not credited.`;
  return `Fails without it (${ab.label}).`;
}
