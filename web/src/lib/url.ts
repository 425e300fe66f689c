// The page's URL is its share link: ?scenario=ID&policies=A,B (&testing=1 for the e2e hooks).
// Parsing never throws: anything malformed becomes a message for the error banner and is ignored.

import { isValidId, parseColumnId } from './columns';

export { isValidId };

export interface UrlState {
  /** Library scenario id, or null for the default one. */
  readonly scenario: string | null;
  /** Column ids (policy ids, or `POLICY~wK` for claim K's ablation, see ./columns), in order, or null for the scenario's first ones. */
  readonly policies: readonly string[] | null;
  /** `?testing=1`: expose window.__schedlabIdle for the e2e tests. */
  readonly testing: boolean;
  /** Human-readable problems found in the URL. */
  readonly errors: readonly string[];
}

/** Most columns the page shows side by side. */
export const MAX_COLUMNS = 4;

function quote(s: string): string {
  return JSON.stringify(s.length > 60 ? s.slice(0, 60) + '…' : s);
}

export function parseUrl(search: string): UrlState {
  const params = new URLSearchParams(search);
  const errors: string[] = [];

  let scenario: string | null = null;
  const scenarios = params.getAll('scenario');
  if (scenarios.length > 1) errors.push(`The URL names ${scenarios.length} scenarios; using the first.`);
  const rawScenario = scenarios[0];
  if (rawScenario !== undefined) {
    if (isValidId(rawScenario)) scenario = rawScenario;
    else errors.push(`The URL's scenario=${quote(rawScenario)} is not a valid scenario id.`);
  }

  let policies: string[] | null = null;
  const rawPolicies = params.get('policies');
  if (rawPolicies !== null) {
    const ids = rawPolicies.split(',').filter((p) => p !== '');
    const bad = ids.filter((p) => parseColumnId(p) === null);
    if (ids.length === 0 || bad.length > 0) {
      errors.push(`The URL's policies=${quote(rawPolicies)} is not a comma-separated list of policy ids.`);
    } else {
      if (ids.length > MAX_COLUMNS)
        errors.push(`The URL names more than ${MAX_COLUMNS} policies; using the first.`);
      policies = ids.slice(0, MAX_COLUMNS);
    }
  }

  const rawTesting = params.get('testing');
  const testing = rawTesting === '1' || rawTesting === 'true';

  return { scenario, policies, testing, errors };
}

/** The search string for a state (keeps unrelated parameters of `base` in place). */
export function toSearch(
  state: { scenario: string | null; policies: readonly string[] | null; testing: boolean },
  base = '',
): string {
  const params = new URLSearchParams(base);
  if (state.scenario) params.set('scenario', state.scenario);
  else params.delete('scenario');
  if (state.policies && state.policies.length > 0) params.set('policies', state.policies.join(','));
  else params.delete('policies');
  if (state.testing) params.set('testing', '1');
  else params.delete('testing');
  const s = params.toString().replace(/%2C/g, ',');
  return s ? `?${s}` : '';
}
