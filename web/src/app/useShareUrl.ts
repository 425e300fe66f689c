// The address bar is the share link: written with what is on screen (scenario, columns, playhead, window, open
// panels, lesson step), at most every 100 ms (the browser rate-limits history updates; scrubbing would exceed
// it), and never while playing (a moving playhead is not a place to share).
import { useEffect, useLayoutEffect, useMemo, useRef } from 'react';
import { scenarioLink, toShareSearch } from '../lib/share';
import type { View } from '../lib/view';
import type { LessonAt } from './useLessons';
import type { Panel } from './usePanels';
import type { Current } from './useScenarioRuns';

/** Least time between two writes of the address bar [ms]. */
const WRITE_EVERY_MS = 100;

export interface ShareInput {
  readonly current: Current | null;
  readonly columns: readonly string[];
  readonly testing: boolean;
  readonly time: number;
  readonly view: View;
  readonly hidden: readonly number[];
  readonly open: readonly Panel[];
  readonly lesson: LessonAt | null;
  readonly playing: boolean;
}

/** Keeps the address bar on the share link of what is on screen; returns that link ('' before a scenario). */
export function useShareUrl({
  current,
  columns,
  testing,
  time,
  view,
  hidden,
  open,
  lesson,
  playing,
}: ShareInput): string {
  const link = useMemo(() => {
    try {
      return current && scenarioLink(current.id, current.baseText, current.text);
    } catch {
      return null; // a scenario that is not JSON never gets here: it was validated before it was shown
    }
  }, [current]);
  const shareSearch = useMemo(() => {
    if (!link) return null;
    return toShareSearch({
      scenario: link,
      policies: columns,
      testing,
      time,
      view,
      hidden,
      open,
      lesson: lesson?.id ?? null,
      step: lesson?.step ?? 0,
    });
  }, [link, columns, testing, time, view, hidden, open, lesson]);

  // A layout effect, so the URL changes in the same commit as the page.
  const lastUrlWrite = useRef(0);
  useLayoutEffect(() => {
    if (playing || shareSearch === null) return;
    const write = () => {
      lastUrlWrite.current = performance.now();
      if (window.location.search + window.location.hash !== shareSearch)
        window.history.replaceState(null, '', window.location.pathname + shareSearch);
    };
    const wait = lastUrlWrite.current + WRITE_EVERY_MS - performance.now();
    if (wait <= 0) {
      write();
      return;
    }
    const timer = setTimeout(write, wait);
    return () => clearTimeout(timer);
  }, [shareSearch, playing]);

  // A link pasted over this one that differs only after the # does not reload the page by itself.
  useEffect(() => {
    const onHash = () => window.location.reload();
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  return shareSearch === null ? '' : window.location.origin + window.location.pathname + shareSearch;
}
