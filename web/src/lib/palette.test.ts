import { describe, expect, it } from 'vitest';
import { domainColor, OKABE_ITO } from './palette';

describe('domainColor', () => {
  it('cycles through Okabe-Ito, negative indices too', () => {
    expect(domainColor(0)).toBe(OKABE_ITO[0]);
    expect(domainColor(9)).toBe(OKABE_ITO[1]);
    expect(domainColor(-1)).toBe(OKABE_ITO[7]);
  });

  it('swaps black for a light grey on the dark theme, and keeps the other hues', () => {
    expect(domainColor(7)).toBe('#000000');
    expect(domainColor(7, true)).not.toBe('#000000');
    for (let i = 0; i < 7; i++) expect(domainColor(i, true)).toBe(domainColor(i));
  });
});
