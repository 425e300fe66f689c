import { describe, expect, it } from 'vitest';
import { chooseColumns, toggleHidden } from './useColumns';

const policies = {
  policies: [
    { id: 'credit', scheduler: 'credit' },
    { id: 'boost', scheduler: 'credit' },
    { id: 'sedf', scheduler: 'sedf' },
  ],
  claims: [{ text: 'boost helps' }, { text: 'boost helps', without: { label: 'boost off' } }],
};

describe('chooseColumns', () => {
  it('shows the first two policies without a preference', () => {
    const told: string[] = [];
    expect(chooseColumns(policies, null, (m) => told.push(m))).toEqual(['credit', 'boost']);
    expect(told).toEqual([]);
  });

  it('keeps the preferred policies once each when the scenario has them all', () => {
    expect(chooseColumns(policies, ['sedf', 'credit', 'sedf'], () => {})).toEqual(['sedf', 'credit']);
  });

  it('falls back to the first two and says which preferred policies are missing', () => {
    const told: string[] = [];
    expect(chooseColumns(policies, ['sedf', 'bvt'], (m) => told.push(m))).toEqual(['credit', 'boost']);
    expect(told).toEqual([
      'Columns not shown: this scenario has no policy "bvt". Showing the scenario\'s first policies.',
    ]);
  });

  it('keeps an ablated column whose claim names an ablation, and falls back on one that does not', () => {
    expect(chooseColumns(policies, ['boost', 'boost~w1'], () => {})).toEqual(['boost', 'boost~w1']);
    const told: string[] = [];
    expect(chooseColumns(policies, ['boost~w0', 'credit'], (m) => told.push(m))).toEqual(['credit', 'boost']);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/claim 0 of this scenario names no ablation/);
  });

  it('shows at most four columns', () => {
    const many = { policies: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, scheduler: 'credit' })) };
    expect(chooseColumns(many, ['e', 'd', 'c', 'b', 'a'], () => {})).toEqual(['e', 'd', 'c', 'b']);
  });
});

describe('toggleHidden', () => {
  it('hides and shows again', () => {
    const hidden = toggleHidden([], 1, 3);
    expect(hidden).toEqual([1]);
    expect(toggleHidden(hidden, 1, 3)).toEqual([]);
  });

  it('always leaves one column shown', () => {
    expect(toggleHidden([0, 1], 2, 3)).toEqual([0, 1]);
  });

  it('does nothing with two columns or fewer, or past the last column', () => {
    const hidden: readonly number[] = [];
    expect(toggleHidden(hidden, 0, 2)).toBe(hidden);
    expect(toggleHidden(hidden, 3, 3)).toBe(hidden);
  });
});
