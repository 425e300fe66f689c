// The schedule a column's timeline draws. A run that kept its whole trace has every segment from the start; a
// replay run (issue 19) holds the detail of one window at a time, so this asks its worker for the window the view
// needs (lib/view `detailWindow`) whenever the view leaves the one held: once per window width while playing, at
// most one replay in flight and the newest window next while scrubbing (off screen while playing, none). Until it
// arrives the old lanes stay on screen and `loading` says the detail is on its way.
import { useCallback, useMemo } from 'react';
import type { SimClient } from '../sim/client';
import type { RunResult } from '../sim/types';
import type { Lane } from '../lib/series';
import { covers, detailWindow, type View } from '../lib/view';
import { usePlayhead, type Playhead, type PlayheadState } from '../lib/playhead';
import { useLatestQuery } from '../lib/useLatestQuery';

export interface WindowDetail {
  readonly lanes: readonly Lane[];
  /** The detail of the window on screen is being replayed. */
  readonly loading: boolean;
  /** Where the lanes hold detail [ms]; null when they hold the whole run. */
  readonly held: View | null;
}

export function useWindowDetail(
  client: SimClient,
  run: RunResult,
  playhead: Playhead,
  durationMs: number,
  visible = true,
): WindowDetail {
  const detail = run.detail ?? null;
  const capMs = detail ? detail.capNs / 1e6 : 0;
  // The wanted window as text: the same string while the view stays in it, so React hears of it once per step.
  const select = useCallback(
    (s: PlayheadState) => (detail ? detailWindow(s.view, capMs, durationMs, s.time).join(' ') : ''),
    [detail, capMs, durationMs],
  );
  // Off screen while playing, no window is replayed for the view (the strip is not drawn then either).
  const wantedKey = usePlayhead(playhead, select, { visible });
  const wanted = useMemo<View | null>(() => {
    if (!detail || wantedKey === '') return null;
    const [a, b] = wantedKey.split(' ').map(Number) as [number, number];
    return [a, b];
  }, [detail, wantedKey]);
  const first = useMemo<View | null>(
    () => (detail ? [detail.fromNs / 1e6, detail.toNs / 1e6] : null),
    [detail],
  );
  const { runId } = run;
  const query = useMemo(
    () =>
      wanted && !covers(first, wanted)
        ? () => client.query(runId, 'focus', Math.round(wanted[0] * 1e6), Math.round(wanted[1] * 1e6))
        : null,
    [client, runId, wanted, first],
  );
  const fetched = useLatestQuery(query).value;
  // The worker sends the lanes split (sim/worker.ts): nothing here walks the segments.
  return useMemo(() => {
    if (!detail) return { lanes: run.lanes, loading: false, held: null };
    const useFetched = fetched !== null && query !== null;
    const held: View = useFetched ? [fetched.fromNs / 1e6, fetched.toNs / 1e6] : first!;
    const lanes = useFetched ? fetched.lanes : run.lanes;
    return { lanes, loading: wanted !== null && !covers(held, wanted), held };
  }, [run, detail, fetched, query, first, wanted]);
}
