import { describe, expect, it } from 'vitest';
import {
  columnId,
  insertColumn,
  columnProblem,
  parseColumnId,
  recordedColumnId,
  registryColumnId,
  registryPolicy,
  SCHEDULERS,
} from './columns';

describe('column ids', () => {
  it('reads a plain policy and an ablated one, and writes them back', () => {
    expect(parseColumnId('pi')).toEqual({ policy: 'pi', ablation: null });
    expect(parseColumnId('credit-4x~w12')).toEqual({ policy: 'credit-4x', ablation: 12 });
    expect(columnId('pi')).toBe('pi');
    expect(columnId('pi', 3)).toBe('pi~w3');
    expect(parseColumnId(columnId('tavs.v2', 0))).toEqual({ policy: 'tavs.v2', ablation: 0 });
  });

  it('rejects malformed ids rather than guessing', () => {
    for (const bad of [
      '',
      '~w1',
      'pi~w',
      'pi~w-1',
      'pi~w01',
      'pi~wx',
      'pi~w1~w2',
      'pi~w1.5',
      'p i',
      'pi~w99999',
    ])
      expect(parseColumnId(bad), bad).toBeNull();
  });

  it('checks an id against the scenario: its policy, and a claim that names an ablation', () => {
    const ids = ['credit', 'pi'];
    const claims = [{}, { without: { label: 'priority inheritance off' } }];
    expect(columnProblem('pi', ids, claims)).toBeNull();
    expect(columnProblem('pi~w1', ids, claims)).toBeNull();
    expect(columnProblem('tavs', ids, claims)).toMatch(/no policy "tavs"/);
    expect(columnProblem('pi~w0', ids, claims)).toMatch(/claim 0 .* no ablation/);
    expect(columnProblem('pi~w7', ids, claims)).toMatch(/claim 7/);
    expect(columnProblem('pi~', ids, claims)).toMatch(/not a column id/);
  });

  it("keeps a recorded trace's column apart from every column a link may name", () => {
    expect(recordedColumnId(1)).toBe('recorded~1');
    expect(parseColumnId(recordedColumnId(1))).toBeNull();
  });
});

describe('registry columns', () => {
  it('names a scheduler of the registry with default parameters', () => {
    expect(SCHEDULERS).toContain('credit2');
    expect(parseColumnId(registryColumnId('credit2'))).toEqual({
      policy: 'credit2~d',
      ablation: null,
      scheduler: 'credit2',
    });
    expect(parseColumnId('nosuch~d')).toBeNull();
    expect(columnProblem('credit2~d', ['credit'], [])).toBeNull();
    expect(registryPolicy('sedf').scheduler).toBe('sedf');
  });
});

describe('insertColumn', () => {
  it('inserts after a column, the last other one giving way at the limit', () => {
    expect(insertColumn(['a', 'b'], 1, 's', 4)).toEqual(['a', 's', 'b']);
    expect(insertColumn(['a', 'b', 'c', 'd'], 2, 's', 4)).toEqual(['a', 'b', 's', 'c']);
    expect(insertColumn(['a', 'b', 'c', 'd'], 4, 's', 4)).toEqual(['a', 'b', 'c', 's']);
  });
});

describe('ablationName', () => {
  it('drops the scenario file\'s 0-based "in policy N"', async () => {
    const { ablationName } = await import('./columns');
    expect(ablationName('partial boosting off (PBratio 0) in policy 1')).toBe(
      'partial boosting off (PBratio 0)',
    );
    expect(ablationName('xBalloon off')).toBe('xBalloon off');
    expect(ablationName('BOOST off in policies 0 and 2')).toBe('BOOST off');
  });
});
