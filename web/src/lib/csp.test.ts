// The Content-Security-Policy is written once (web/csp.json, read by the build's meta element and by
// scripts/serve.mjs's header); the user guide's "Hosting" section (docs/page.md) tells other hosts what to send, so it must say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import csp from '../../csp.json' with { type: 'json' };
import { CONTENT_SECURITY_POLICY } from '../../vite.config';

const guide = readFileSync(new URL('../../../docs/page.md', import.meta.url), 'utf8');

/** The header the README documents, its continuation lines joined. */
function documentedHeader(): string {
  const m = /^Content-Security-Policy: ([\s\S]*?)\nX-Frame-Options:/m.exec(guide);
  if (!m?.[1]) throw new Error('docs/page.md: no Content-Security-Policy header block');
  return m[1].replace(/\s*\n\s*/g, ' ').trim();
}

describe('Content-Security-Policy', () => {
  it('the hosting guide documents the header serve.mjs sends', () => {
    expect(documentedHeader()).toBe([...csp.page, ...csp.headerOnly].join('; '));
  });

  it('the meta element carries every directive but those only a header can', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(csp.page.join('; '));
    expect(CONTENT_SECURITY_POLICY).not.toContain('frame-ancestors');
    expect(csp.headerOnly).toEqual(["frame-ancestors 'none'"]);
  });
});
