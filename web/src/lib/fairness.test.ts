import { describe, expect, it } from 'vitest';
import { fairShareLabel } from './fairness';

describe('fairShareLabel', () => {
  it('names the rule the line is drawn by', () => {
    expect(fairShareLabel('domain_weight', 'domain_weight')).toBe('fair share by domain weight');
  });
  it("adds the policy's own rule when it differs", () => {
    expect(fairShareLabel('domain_weight', 'vcpu_weight')).toBe(
      'fair share by domain weight (this policy: by weight × active vCPUs)',
    );
    expect(fairShareLabel('domain_weight', 'reservation')).toContain('this policy: by reservation');
  });
  it('reads an unknown rule and a missing one', () => {
    expect(fairShareLabel(undefined, undefined)).toBe('fair share by domain weight');
    expect(fairShareLabel('domain_weight', 'per_vm_weight')).toContain('per vm weight');
  });
});
