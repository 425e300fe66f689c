import { describe, expect, it } from 'vitest';
import { domainColor, OKABE_ITO } from './palette';

describe('domainColor', () => {
  it('uses Okabe-Ito for the first eight domains', () => {
    expect(domainColor(0)).toBe(OKABE_ITO[0]);
    expect(domainColor(7)).toBe(OKABE_ITO[7]);
  });

  it('never repeats a colour within 24 domains (darker, then lighter hues past 8), in both themes', () => {
    for (const dark of [false, true]) {
      const colors = Array.from({ length: 24 }, (_, i) => domainColor(i, dark).toLowerCase());
      expect(new Set(colors).size).toBe(24);
    }
    expect(domainColor(24)).toBe(domainColor(0));
    expect(domainColor(-1)).toMatch(/^#[0-9a-f]{6}$/i);
  });

  it('swaps black for a light grey on the dark theme, and keeps the other hues', () => {
    expect(domainColor(7)).toBe('#000000');
    expect(domainColor(7, true)).not.toBe('#000000');
    for (let i = 0; i < 7; i++) expect(domainColor(i, true)).toBe(domainColor(i));
  });
});
