// The optional `focus` field is part of the scenario format: the simulator accepts it and ignores it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { initSync, validate_scenario } from './pkg/schedsim_wasm.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('scenario focus', () => {
  beforeAll(() => {
    initSync({ module: readFileSync(`${root}web/src/sim/pkg/schedsim_wasm_bg.wasm`) });
  });

  it('is accepted when well-formed and rejected with its path otherwise', () => {
    const doc = JSON.parse(readFileSync(`${root}scenarios/credit-weights.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    expect(() =>
      validate_scenario(
        JSON.stringify({ ...doc, focus: { policies: ['credit'], metrics: ['fairness.jain'] } }),
      ),
    ).not.toThrow();
    expect(() => validate_scenario(JSON.stringify({ ...doc, focus: { columns: ['credit'] } }))).toThrow(
      /focus/,
    );
  });
});
