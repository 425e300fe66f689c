// The window of detail a column's view asks its worker about, followed as the playhead moves: decided by
// lib/view (`detailWindow` for what the timelines show, `playheadWindow` for questions about the playhead), so
// that every view of a column asks for the same windows and the worker replays each one once.
import { useCallback, useMemo } from 'react';
import type { DetailWindow, RunOpening } from '../sim/types';
import { detailWindow, parseWindowKey, playheadWindow, windowKey } from '../lib/view';
import { usePlayhead, type Playhead, type PlayheadOptions, type PlayheadState } from '../lib/playhead';

/**
 * `run`'s window of detail for the timelines' view (`at: 'view'`) or around the playhead (`at: 'playhead'`): the
 * same object while it stays the same window, so React hears of it once per window, not per frame.
 */
export function useDetailWindow(
  playhead: Playhead,
  run: RunOpening,
  at: 'view' | 'playhead',
  options: PlayheadOptions = {},
): DetailWindow {
  const capMs = run.capNs / 1e6;
  const durationMs = run.meta.duration_ns / 1e6;
  const select = useCallback(
    (s: PlayheadState) => windowKey((at === 'view' ? detailWindow : playheadWindow)(s, capMs, durationMs)),
    [at, capMs, durationMs],
  );
  const key = usePlayhead(playhead, select, options);
  return useMemo(() => parseWindowKey(key), [key]);
}
