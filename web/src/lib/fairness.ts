// Words for the report's share rules (`fairness.basis`, `fairness.rule`), for labels on the page.

/** How a share rule of the report (`fairness.basis`, `fairness.rule`) divides the host, in words. */
const RULE_WORDS: Readonly<Record<string, string>> = {
  domain_weight: 'by domain weight',
  vcpu_weight: 'by weight × active vCPUs',
  reservation: 'by reservation',
};

/** The fair-share line's label: the rule it is drawn by and, when the policy divides the host otherwise, that rule. */
export function fairShareLabel(basis: string | undefined, rule: string | undefined): string {
  const words = (r: string) => RULE_WORDS[r] ?? r.replace(/_/g, ' ');
  const drawn = `fair share ${words(basis ?? 'domain_weight')}`;
  return rule && rule !== (basis ?? 'domain_weight') ? `${drawn} (this policy: ${words(rule)})` : drawn;
}
