// The address bar is the share link: written with what is on screen (scenario, columns, playhead, window, open
// panels, lesson step, speed), at most every 100 ms (the browser rate-limits history updates; scrubbing would
// exceed it), and never while playing (a moving playhead is not a place to share). Another scenario on screen is
// a new history entry, and so is another lesson step, so Back and Forward move between scenarios and steps
// (`onHistory` shows the entry's link).
import { useEffect, useLayoutEffect, useMemo, useRef } from 'react';
import { parseShareUrl, scenarioLink, toShareSearch, type ShareState } from '../lib/share';
import { START_SPEED } from '../lib/speed';
import { withTraces, type TraceRef } from '../lib/traceLink';
import type { View } from '../lib/view';
import type { LessonAt } from './useLessons';
import type { Panel } from './usePanels';
import type { Current } from './useScenarioRuns';

const NO_TRACES: readonly TraceRef[] = [];

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
  readonly speed: number;
  /** Presentation mode. */
  readonly presenting?: boolean;
  /** Back or Forward landed on another entry: show its link. */
  readonly onHistory: (link: ShareState) => void;
  /** Recorded traces on screen, named in the link's fragment by their hash (lib/traceLink). */
  readonly traces?: readonly TraceRef[];
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
  speed,
  presenting = false,
  onHistory,
  traces = NO_TRACES,
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
    const search = toShareSearch({
      scenario: link,
      policies: columns,
      testing,
      time,
      view,
      hidden,
      // The link is copied from the Share panel: whoever opens it wants the page, not the panel.
      open: open.filter((p) => p !== 'share'),
      lesson: lesson?.id ?? null,
      step: lesson?.step ?? 0,
      speed: speed === START_SPEED ? null : speed,
      present: presenting,
    });
    return withTraces(search, traces);
  }, [link, columns, testing, time, view, hidden, open, lesson, speed, presenting, traces]);

  // Which scenario and lesson step the address bar's entry is for: another one pushes an entry, the same one
  // replaces it.
  const identity = current
    ? `${current.id ?? ''}\n${current.id ? '' : current.name}\n${lesson ? `${lesson.id}:${lesson.step}` : ''}`
    : null;
  const entryOf = useRef<string | null>(null);
  /** Back/Forward loads the entry's scenario: that load replaces the entry rather than pushing another. */
  const fromHistory = useRef(false);

  // A layout effect, so the URL changes in the same commit as the page.
  const lastUrlWrite = useRef(0);
  useLayoutEffect(() => {
    if (playing || shareSearch === null) return;
    const write = () => {
      lastUrlWrite.current = performance.now();
      const switched = entryOf.current !== null && identity !== entryOf.current && !fromHistory.current;
      if (identity !== entryOf.current) fromHistory.current = false;
      entryOf.current = identity;
      if (window.location.search + window.location.hash === shareSearch) return;
      if (switched) window.history.pushState(null, '', window.location.pathname + shareSearch);
      else window.history.replaceState(null, '', window.location.pathname + shareSearch);
    };
    const wait = lastUrlWrite.current + WRITE_EVERY_MS - performance.now();
    if (wait <= 0) {
      write();
      return;
    }
    const timer = setTimeout(write, wait);
    return () => clearTimeout(timer);
  }, [shareSearch, playing, identity]);

  const historyRef = useRef(onHistory);
  useEffect(() => {
    historyRef.current = onHistory;
  }, [onHistory]);
  useEffect(() => {
    const onPop = () => {
      fromHistory.current = true;
      historyRef.current(parseShareUrl(window.location.search, window.location.hash));
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // A link pasted over this one that differs only after the # does not reload the page by itself.
  useEffect(() => {
    const onHash = () => window.location.reload();
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  return shareSearch === null ? '' : window.location.origin + window.location.pathname + shareSearch;
}
