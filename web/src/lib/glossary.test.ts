import { describe, expect, it } from 'vitest';
import { findTerms, GLOSSARY } from './glossary';

describe('glossary', () => {
  it('explains the terms the issue names, each with a unique anchor', () => {
    const ids = GLOSSARY.map((g) => g.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ['boost', 'under-over', 'credit', 'lag', 'jain', 'pbhr', 'belief', 'coscheduling'])
      expect(ids).toContain(id);
    // A newcomer's words, in plain language.
    for (const id of ['hypervisor', 'xen', 'kvm', 'domain', 'vcpu', 'dom0']) expect(ids).toContain(id);
  });

  it('links only the first use of each term, and keeps the text whole', () => {
    const text = 'dom0 wakes with BOOST; BOOST sits ahead of UNDER. Jain’s index stays high.';
    const parts = findTerms(text);
    expect(parts.map((p) => p.text).join('')).toBe(text);
    const linked = parts.filter((p) => p.entry).map((p) => [p.text, p.entry!.id]);
    expect(linked).toEqual([
      ['dom0', 'dom0'],
      ['BOOST', 'boost'],
      ['UNDER', 'under-over'],
      ['Jain’s index', 'jain'],
    ]);
    // The timeline legend's words: a lane's state and the wait it marks.
    expect(findTerms('spin').map((p) => p.entry?.id)).toEqual(['spinning']);
    expect(findTerms('wake → run; blank: blocked')[0]?.entry?.id).toBe('wake-to-run');
    const seen = new Set(['boost']);
    expect(findTerms('BOOST again', seen).some((p) => p.entry)).toBe(false);
  });
});
