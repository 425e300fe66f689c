// The page's test hooks are a contract (docs/test-hooks.md): scripts and checks outside this repo
// find elements by them. This keeps the list and the source in step both ways, so a hook cannot be renamed or
// dropped without the list saying so, and a new one cannot ship unlisted.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('.', import.meta.url));
const doc = readFileSync(fileURLToPath(new URL('../../docs/test-hooks.md', import.meta.url)), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'pkg' || d.name === 'generated' ? [] : sources(path);
    return /\.tsx?$/.test(d.name) && !/\.test\.tsx?$/.test(d.name) ? [path] : [];
  });
}

const files = sources(src).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

/** Hooks written as literals (`data-testid="x"`, a chart's `testId="x"`), not selectors (`[data-testid="x"]`). */
const literal = new Set(
  files.flatMap(({ text }) =>
    [...text.matchAll(/(?<!\[)(?:data-testid|testId)="([a-z0-9-]+)"/g)].map((m) => m[1]!),
  ),
);

/** Hooks built from a template (`runqueue-pcpu-${p}`): as a pattern, with the literal text before the first hole. */
const templates = files.flatMap(({ text, path }) =>
  [...text.matchAll(/(?:data-testid=\{|testId = )`([^`]*)`/g)].map((m) => {
    const raw = m[1]!;
    const head = raw.split('${')[0]!;
    const pattern = new RegExp(`^${raw.replace(/\$\{[^}]*\}/g, '.+')}$`);
    return { raw, head, pattern, text, path };
  }),
);

/** The first cell of each table row of the doc: one or more backticked names. */
const listed = doc
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));

/** `open-<lessons, editor>` -> open-lessons, open-editor; `runqueue-pcpu-<N>` stays a placeholder. */
function expand(name: string): { name: string; family: string | null }[] {
  const m = /^(.*)<([^>]+)>(.*)$/.exec(name);
  if (!m || !m[2]!.includes(',')) return [{ name, family: m ? m[1]! : null }];
  return m[2]!.split(',').map((v) => ({ name: `${m[1]}${v.trim()}${m[3]}`, family: m[1]! }));
}

const documented = listed.flatMap(expand);

describe('test hooks (docs/test-hooks.md)', () => {
  it('reads a full list', () => {
    expect(documented.length).toBeGreaterThan(90);
    expect(literal.size).toBeGreaterThan(80);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('lists every hook the page renders', () => {
    const exact = new Set(documented.map((d) => d.name));
    const unlisted = [...literal].filter((h) => !exact.has(h));
    expect(unlisted).toEqual([]);
    // A template hook needs a documented family that it can produce.
    const unmatched = templates
      .filter((t) => t.head !== '')
      .filter((t) => !documented.some((d) => t.pattern.test(d.name)))
      .map((t) => t.raw);
    expect(unmatched).toEqual([]);
  });

  it('lists no hook the page no longer renders', () => {
    const gone = documented.filter(({ name, family }) => {
      if (literal.has(name)) return false;
      if (family === null) return true;
      // A family member: built by a template with the family's head, or (`export-<png, svg>`) from a literal
      // prefix and a literal value in one file.
      if (templates.some((t) => t.head !== '' && name.startsWith(t.head) && t.pattern.test(name)))
        return false;
      const value = name.slice(family.length);
      const prefix = family.replace(/-$/, '');
      return !files.some(
        ({ text }) => text.includes(`prefix="${prefix}"`) && new RegExp(`['"]${value}['"]`).test(text),
      );
    });
    expect(gone.map((d) => d.name)).toEqual([]);
  });
});
