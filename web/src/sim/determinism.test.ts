// The wasm build and the native CLI must produce the same report, byte for byte, for every library scenario:
// integer-nanosecond time and seeded streams make runs reproducible, and this is where that promise is kept.
// Needs `npm run build:wasm` and `npm run build:cli` first (npm test does both).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { initSync, run_report } from './pkg/schedsim_wasm.js';
import { parseIndex } from '../lib/scenarios';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const wasmPath = `${root}web/src/sim/pkg/schedsim_wasm_bg.wasm`;
// Honour CARGO_TARGET_DIR as `npm run build:cli` (run from the repo root) does.
const targetDir = process.env.CARGO_TARGET_DIR
  ? resolve(root, process.env.CARGO_TARGET_DIR)
  : `${root}sim-wasm/target`;
const cliPath = `${targetDir}/release/schedsim`;
const index = parseIndex(readFileSync(`${root}scenarios/index.json`, 'utf8'));

/** Where two texts first differ, with a little context, instead of a diff of two huge JSON lines. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 80);
  return `first difference at offset ${i} (lengths ${a.length} vs ${b.length}):\n  wasm:   …${a.slice(from, i + 80)}\n  native: …${b.slice(from, i + 80)}`;
}

describe('wasm run_report == native `schedsim run --deterministic`', () => {
  beforeAll(() => {
    if (!existsSync(wasmPath)) throw new Error(`${wasmPath} is missing: run \`npm run build:wasm\` first`);
    if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build:cli\` first`);
    initSync({ module: readFileSync(wasmPath) });
  });

  it('covers the whole library', () => {
    expect(index.scenarios.length).toBeGreaterThan(0);
  });

  for (const entry of index.scenarios) {
    it(entry.id, () => {
      const file = `${root}scenarios/${entry.file}`;
      const native = execFileSync(cliPath, ['run', '--deterministic', file], {
        encoding: 'utf8',
        maxBuffer: 512 * 1024 * 1024,
      }).replace(/\n$/, ''); // the CLI ends its output with a newline; the string API does not
      const wasm = run_report(readFileSync(file, 'utf8'), '[]', true);
      if (wasm !== native) expect.fail(`${entry.id}: ${firstDifference(wasm, native)}`);
    });
  }
});
