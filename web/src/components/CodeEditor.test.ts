import { describe, expect, it } from 'vitest';
import { diagnostics } from './CodeEditor';

describe('the script editor’s error marker', () => {
  it('covers the named line from the named column', () => {
    const doc = 'fn a() {\n    let x = ;\n}\n';
    expect(diagnostics(doc, { line: 2, column: 13, message: 'm' })).toEqual([
      { from: 21, to: 22, severity: 'error', message: 'm' },
    ]);
    // A runtime error names a line only: the whole line.
    expect(diagnostics(doc, { line: 2, column: null, message: 'r' })[0]).toMatchObject({ from: 9, to: 22 });
    expect(diagnostics(doc, { line: null, column: null, message: 'x' })).toEqual([]);
    expect(diagnostics(doc, null)).toEqual([]);
  });
});
