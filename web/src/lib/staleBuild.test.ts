import { describe, expect, it } from 'vitest';
import { isChunkLoadError } from './staleBuild';

describe('isChunkLoadError', () => {
  it('recognises each browser wording of a missing chunk', () => {
    for (const m of [
      'The scenario could not be loaded: Failed to fetch dynamically imported module: https://x/assets/a-1.js',
      'error loading dynamically imported module: https://x/assets/a-1.js',
      'Importing a module script failed.',
    ])
      expect(isChunkLoadError(m)).toBe(true);
  });
  it('leaves other errors alone', () => {
    expect(isChunkLoadError('invalid scenario: host.pcpus: 0 is less than the minimum of 1')).toBe(false);
  });
});
