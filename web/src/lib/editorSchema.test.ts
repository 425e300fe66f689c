import { describe, expect, it } from 'vitest';
import type { Json } from './share';
import {
  SCENARIO_SCHEMA,
  effective,
  freshItem,
  parseProblems,
  sameJson,
  setIn,
  singular,
  skeleton,
} from './editorSchema';

const defs = SCENARIO_SCHEMA.$defs;

describe('editor schema', () => {
  it('merges the workload branch that matches its type', () => {
    const server = effective(defs.workload!, { type: 'server' });
    expect(Object.keys(server.properties ?? {})).toEqual(
      expect.arrayContaining(['port', 'cpu_us', 'think_ms']),
    );
    expect(server.required).toContain('port');
    const cpu = effective(defs.workload!, { type: 'cpu' });
    expect(cpu.properties).not.toHaveProperty('port');
  });

  it("gives a credit policy's params their fields", () => {
    const credit = effective(defs.policy!, { id: 'c', scheduler: 'credit' });
    const params = effective(credit.properties!.params!, {});
    expect(Object.keys(params.properties ?? {})).toEqual(expect.arrayContaining(['boost', 'tslice_ms']));
  });

  it('builds new items with their required fields', () => {
    expect(skeleton(defs.domain!, 'dom3')).toEqual({ name: 'dom3' });
    expect(skeleton(defs.task!, 't1')).toEqual({ name: 't1', workload: { type: 'cpu' } });
    expect(skeleton(defs.policy!, 'p1')).toEqual({ id: 'p1', scheduler: 'credit' });
  });

  it("reads the simulator's messages back into field paths", () => {
    expect(parseProblems('invalid scenario: domains[1].weight: 0 is less than the minimum of 1')).toEqual([
      { path: 'domains[1].weight', message: '0 is less than the minimum of 1' },
    ]);
    expect(
      parseProblems(
        'invalid scenario (2 problems): host.pcpus: "x" is not of type "integer"; warmup_ms: too long',
      ),
    ).toEqual([
      { path: 'host.pcpus', message: '"x" is not of type "integer"' },
      { path: 'warmup_ms', message: 'too long' },
    ]);
  });

  it('sets and removes values by path without touching the input', () => {
    const doc: { domains: { name: string; weight?: number }[] } & Json = {
      domains: [{ name: 'a' }, { name: 'b', weight: 5 }],
    };
    expect(setIn(doc, ['domains', 1, 'weight'], 9)).toEqual({
      domains: [{ name: 'a' }, { name: 'b', weight: 9 }],
    });
    expect(setIn(doc, ['domains', 0], undefined)).toEqual({ domains: [{ name: 'b', weight: 5 }] });
    expect(setIn(doc, ['host', 'net', 'mbps'], 10)).toMatchObject({ host: { net: { mbps: 10 } } });
    expect(doc.domains[1]!.weight).toBe(5);
    expect(sameJson('{"a":1,"b":[1,2]}', '{ "b": [1, 2], "a": 1 }')).toBe(true);
    expect(sameJson('{"a":1}', '{"a":2}')).toBe(false);
  });
});

describe('new list items', () => {
  const defs = SCENARIO_SCHEMA.$defs;
  it('gives a new domain a CPU-bound task, so adding it changes the run', () => {
    expect(freshItem(defs.domain!, 'dom3')).toEqual({
      name: 'dom3',
      tasks: [{ name: 'burn', workload: { type: 'cpu' } }],
    });
    expect(freshItem(defs.policy!, 'p1')).toEqual({ id: 'p1', scheduler: 'credit' });
  });
  it('names list items in the singular', () => {
    expect(singular('policies')).toBe('policy');
    expect(singular('domains')).toBe('domain');
    expect(singular('claims')).toBe('claim');
  });
});

describe('editJsonText', () => {
  it('changes only the lines a form edit touches, and keeps the rest as written', async () => {
    const { editJsonText } = await import('./editorSchema');
    const text =
      '{\n  "schema": 1,\n  "pcpus": [0, 1],\n  "domains": [\n    { "name": "a", "weight": 256 }\n  ]\n}\n';
    const out = editJsonText(text, ['domains', 0, 'weight'], 512);
    expect(out).toBe(text.replace('256', '512'));
    const removed = editJsonText(text, ['pcpus'], undefined);
    expect(JSON.parse(removed)).toEqual({ schema: 1, domains: [{ name: 'a', weight: 256 }] });
    expect(removed).toContain('{ "name": "a", "weight": 256 }');
    const added = editJsonText(text, ['domains', 1], { name: 'b', weight: 128 });
    expect(JSON.parse(added).domains).toEqual([
      { name: 'a', weight: 256 },
      { name: 'b', weight: 128 },
    ]);
    expect(added).toContain('{ "name": "a", "weight": 256 }');
    // Not JSON: left alone (the JSON view shows the syntax error).
    expect(editJsonText('{', ['x'], 1)).toBe('{');
  });
});
