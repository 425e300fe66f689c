// The policy columns on screen: which policy each shows, and which ones the 1-4 keys hid.
import { useCallback, useMemo, useState } from 'react';
import type { ScenarioDoc } from '../sim/types';
import { MAX_COLUMNS } from '../lib/url';
import { columnProblem } from '../lib/columns';
import { scenarioFocus } from '../lib/focus';

/** What `chooseColumns` reads of a scenario. */
export type ColumnScenario = Pick<ScenarioDoc, 'policies' | 'claims' | 'focus'>;

/**
 * The columns to show: the URL's column ids (policies, or `POLICY~wK` ablated runs) when all of them fit the
 * scenario, else its focus policies (the ones its claims compare, lib/focus).
 */
export function chooseColumns(
  scenario: ColumnScenario,
  preferred: readonly string[] | null,
  report: (m: string) => void,
): string[] {
  const ids = scenario.policies.map((p) => p.id);
  if (preferred) {
    const problems = preferred.flatMap((c) => columnProblem(c, ids, scenario.claims ?? []) ?? []);
    if (problems.length === 0) return [...new Set(preferred)].slice(0, MAX_COLUMNS);
    report(`Columns not shown: ${problems.join('; ')}. Showing the scenario's focus policies.`);
  }
  return [...scenarioFocus(scenario).policies];
}

/** Hides or shows column `i` of `count`; only with more than two columns, and one column always stays. */
export function toggleHidden(hidden: readonly number[], i: number, count: number): readonly number[] {
  if (count <= 2 || i >= count) return hidden;
  if (hidden.includes(i)) return hidden.filter((k) => k !== i);
  return hidden.length + 1 >= count ? hidden : [...hidden, i];
}

/** Why key `i + 1` cannot show or hide a column (toggleHidden would change nothing), or null when it can. */
export function whyNotToggle(hidden: readonly number[], i: number, count: number): string | null {
  if (count <= 2)
    return `Keys 1-4 show or hide columns when more than two are on screen; there are ${count}.`;
  if (i >= count) return `There is no column ${i + 1}: ${count} columns are on screen.`;
  if (!hidden.includes(i) && hidden.length + 1 >= count)
    return `Column ${i + 1} is the only one shown: one column always stays on screen.`;
  return null;
}

export interface Columns {
  /** Column id per column (a policy id, or `POLICY~wK` for its run on claim K's ablation; see lib/columns). */
  readonly columns: readonly string[];
  /** Indices of the hidden columns. */
  readonly hidden: readonly number[];
  /** The columns drawn, with their index. */
  readonly shown: readonly { readonly policy: string; readonly i: number }[];
  /**
   * A new scenario's columns (see `chooseColumns`) and the hidden ones a link or lesson restores (at least one
   * stays shown); returns the columns.
   */
  readonly layout: (
    scenario: ColumnScenario,
    preferred: readonly string[] | null,
    hidden?: readonly number[],
  ) => readonly string[];
  /** Other columns; the hidden ones are cleared when their number changes. */
  readonly changeColumns: (next: readonly string[]) => void;
  readonly setColumn: (i: number, policy: string) => void;
  /** A new column with the first column id of `ids` not on screen (none when all are). */
  readonly addColumn: (ids: readonly string[]) => void;
  readonly removeColumn: (i: number) => void;
  /** Shows or hides column `i` (keys 1-4). */
  readonly toggleColumn: (i: number) => void;
}

/** `report`: told when the preferred columns do not fit the scenario. */
export function useColumns(report: (m: string) => void): Columns {
  const [columns, setColumns] = useState<readonly string[]>([]);
  const [hidden, setHidden] = useState<readonly number[]>([]);

  const layout = useCallback(
    (scenario: ColumnScenario, preferred: readonly string[] | null, hide: readonly number[] = []) => {
      const next = chooseColumns(scenario, preferred, report);
      setColumns(next);
      setHidden(hide.filter((i) => i < next.length).slice(0, next.length - 1));
      return next;
    },
    [report],
  );

  const changeColumns = useCallback(
    (next: readonly string[]) => {
      setColumns(next);
      if (next.length !== columns.length) setHidden([]);
    },
    [columns],
  );

  const setColumn = useCallback(
    (i: number, policy: string) => changeColumns(columns.map((p, k) => (k === i ? policy : p))),
    [columns, changeColumns],
  );

  const addColumn = useCallback(
    (ids: readonly string[]) => {
      const next = ids.find((p) => !columns.includes(p));
      if (columns.length >= MAX_COLUMNS || next === undefined) return;
      changeColumns([...columns, next]);
    },
    [columns, changeColumns],
  );

  const removeColumn = useCallback(
    (i: number) => {
      if (columns.length > 1) changeColumns(columns.filter((_, k) => k !== i));
    },
    [columns, changeColumns],
  );

  const toggleColumn = useCallback(
    (i: number) => setHidden((h) => toggleHidden(h, i, columns.length)),
    [columns.length],
  );

  const shown = useMemo(
    () => columns.map((policy, i) => ({ policy, i })).filter(({ i }) => !hidden.includes(i)),
    [columns, hidden],
  );

  return { columns, hidden, shown, layout, changeColumns, setColumn, addColumn, removeColumn, toggleColumn };
}
