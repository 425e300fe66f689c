// The page: the scenario library and loader on the left; on the right one scenario played under two (or more)
// policies side by side on one playhead, and the scenario's claims checked over all of its policies.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Cancelled, SimClient } from './sim/client';
import type { ClaimResult, RunResult, ScenarioDoc, ScenarioPolicy } from './sim/types';
import { findEntry, loadIndex, loadScenarioText, type ScenarioIndex } from './lib/scenarios';
import { MAX_COLUMNS } from './lib/url';
import { LinkError, parseShareUrl, resolveLibraryRef, scenarioLink, toShareSearch } from './lib/share';
import { findLesson, PENDING_SCENARIOS } from './lib/lessons';
import { ThemeContext, useTheme } from './lib/theme';
import { chooseBucketMs } from './lib/series';
import { clampView, defaultView, follow, zoomView, type View } from './lib/view';
import { toNs } from './lib/decisions';
import { Playhead, selectTime, selectView, usePlayhead } from './lib/playhead';
import { ClaimsPanel } from './components/ClaimsPanel';
import { ComparisonPanel, type ComparedRun } from './components/ComparisonPanel';
import { ErrorBanner } from './components/ErrorBanner';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Library } from './components/Library';
import { PolicyColumn } from './components/PolicyColumn';
import { Transport } from './components/Transport';
import { nextSpeed } from './lib/speed';
import { Editor } from './components/Editor';
import { ExportPanel } from './components/ExportPanel';
import { LessonPicker, LessonPlayer } from './components/Lessons';
import { SharePanel } from './components/SharePanel';
import { ScenarioSummary } from './components/ScenarioSummary';

declare global {
  interface Window {
    /** `?testing=1`: true once every run is done and drawn (DESIGN.md 7). */
    __schedlabIdle?: boolean;
  }
}

interface Current {
  /** Bumps on every new scenario; resets views that keep state. */
  readonly key: number;
  /** Library id, or null for a user's own file. */
  readonly id: string | null;
  readonly name: string;
  readonly text: string;
  readonly doc: ScenarioDoc;
  /** The library file's text when `id` is set: a share link carries the edits as a patch against it. */
  readonly baseText: string | null;
}

/** Where a (re)loaded scenario's view starts: a share link's or a lesson step's, else the default. */
interface Restore {
  readonly time?: number | null;
  readonly view?: readonly [number, number] | null;
  readonly hidden?: readonly number[];
}

/** Panels of the page shell that a share link remembers as open. */
type Panel = 'editor' | 'export' | 'share' | 'lessons';
const PANELS: readonly Panel[] = ['editor', 'export', 'share', 'lessons'];

/** The page shell follows the playhead only when playback is not moving it. */
const SHELL = { playingMs: Infinity } as const;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The columns to show: the URL's policies when the scenario has them all, else its first two. */
function chooseColumns(
  policies: readonly ScenarioPolicy[],
  preferred: readonly string[] | null,
  report: (m: string) => void,
): string[] {
  const ids = policies.map((p) => p.id);
  if (preferred) {
    const unknown = preferred.filter((p) => !ids.includes(p));
    if (unknown.length === 0) return [...new Set(preferred)].slice(0, MAX_COLUMNS);
    report(`This scenario has no policy ${unknown.map((u) => `"${u}"`).join(', ')}; showing its first ones.`);
  }
  return ids.slice(0, 2);
}

/** Whether a key press belongs to the focused control (typing, a list, a slider) rather than to the page. */
function ownKey(e: KeyboardEvent, slider: boolean): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  const tag = t.tagName;
  if (t.isContentEditable || tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return (t as HTMLInputElement).type !== 'range' || slider;
  return false;
}

export function App() {
  const [urlState] = useState(() => parseShareUrl(window.location.search, window.location.hash));
  const testing = urlState.testing;
  const [errors, setErrors] = useState<string[]>(() => [...urlState.errors]);
  const [index, setIndex] = useState<ScenarioIndex | null>(null);
  const [current, setCurrent] = useState<Current | null>(null);
  const [columns, setColumns] = useState<string[]>([]);
  const [runs, setRuns] = useState<Readonly<Record<string, RunResult>>>({});
  const [claims, setClaims] = useState<ClaimResult[] | null>(null);
  /** Why the current scenario's runs stopped, if they failed. */
  const [runError, setRunError] = useState<string | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [busyOps, setBusyOps] = useState(1); // the boot sequence counts as one
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(0.25);
  /** Playhead and window: outside React state, so playback re-renders only the views that draw them. */
  const [playhead] = useState(() => new Playhead());
  // The page shell (share link, export panel) reads them only when playback is not moving them.
  const time = usePlayhead(playhead, selectTime, SHELL);
  const view = usePlayhead(playhead, selectView, SHELL);
  useEffect(() => playhead.set({ playing }), [playhead, playing]);
  const setView = useCallback(
    (next: View | ((v: View) => View)) =>
      playhead.set({ view: typeof next === 'function' ? next(playhead.view) : next }),
    [playhead],
  );
  /** Columns (by index) hidden with the 1-4 keys; cleared whenever the columns change. */
  const [hidden, setHidden] = useState<readonly number[]>([]);
  /** Playhead queries in flight (only tracked for the ?testing=1 idle hook). */
  const [querying, setQuerying] = useState(false);
  const [client] = useState(() => new SimClient());
  const [open, setOpen] = useState<readonly Panel[]>(() => PANELS.filter((p) => urlState.open.includes(p)));
  const [lesson, setLesson] = useState<{ id: string; step: number } | null>(() =>
    urlState.lesson && findLesson(urlState.lesson) ? { id: urlState.lesson, step: urlState.step } : null,
  );
  const [lessonMissing, setLessonMissing] = useState<string | null>(null);
  const [presenting, setPresenting] = useState(false);
  const [theme, toggleTheme] = useTheme();
  const togglePanel = useCallback(
    (p: Panel, on?: boolean) =>
      setOpen((o) => ((on ?? !o.includes(p)) ? (o.includes(p) ? o : [...o, p]) : o.filter((x) => x !== p))),
    [],
  );
  const genRef = useRef(0);

  const durationMs = current?.doc.duration_ms ?? 0;
  const busy = busyOps > 0 || progress !== null;

  const addError = useCallback(
    (m: string) => setErrors((prev) => (prev.includes(m) ? prev : [...prev, m])),
    [],
  );

  const getClient = useCallback(() => client, [client]);
  useEffect(() => {
    if (testing) client.onQueries(setQuerying);
    return () => {
      client.onQueries(null);
      client.dispose();
    };
  }, [client, testing]);

  /** Validates, then (only if valid) replaces what is on screen and runs every policy. */
  const start = useCallback(
    async (
      text: string,
      origin: { id: string | null; name: string; baseText: string | null },
      preferred: readonly string[] | null,
      restore: Restore = {},
    ): Promise<boolean> => {
      const client = getClient();
      let problem: string | null;
      try {
        problem = await client.validate(text);
      } catch (e) {
        addError(`${origin.name}: the simulator could not check it (${message(e)}).`);
        return false;
      }
      if (problem !== null) {
        addError(`${origin.name} was not loaded: ${problem}`);
        return false;
      }
      const doc = JSON.parse(text) as ScenarioDoc;
      const policyIds = doc.policies.map((p) => p.id);
      if (policyIds.length === 0) {
        addError(`${origin.name} lists no policies to run.`);
        return false;
      }
      const gen = ++genRef.current;
      const live = () => gen === genRef.current;
      // A new scenario: stop its predecessor's runs and free the finished ones the views were querying.
      client.reset();
      const cols = chooseColumns(doc.policies, preferred, addError);
      setCurrent({ key: gen, id: origin.id, name: origin.name, text, doc, baseText: origin.baseText });
      setColumns(cols);
      setHidden((restore.hidden ?? []).filter((i) => i < cols.length).slice(0, cols.length - 1));
      setRuns({});
      setClaims(null);
      setRunError(null);
      setProgress(0);
      setPlaying(false);
      const t0 = Math.min(Math.max(restore.time ?? 0, 0), doc.duration_ms);
      playhead.set({
        time: t0,
        view: restore.view
          ? clampView(restore.view, doc.duration_ms)
          : follow(defaultView(doc.duration_ms), t0, doc.duration_ms),
      });

      // The columns on screen run first so they draw while the others finish.
      const order = [...cols, ...policyIds.filter((p) => !cols.includes(p))];
      try {
        const results = await client.runAll(text, order, chooseBucketMs(doc.duration_ms), {
          onProgress: (f) => live() && setProgress(f),
          onRun: (run) => live() && setRuns((prev) => ({ ...prev, [run.policy]: run })),
        });
        if (!live()) return true;
        const checked = await client.claims(
          text,
          results.map((r) => r.report),
        );
        if (live()) setClaims(checked);
      } catch (e) {
        if (e instanceof Cancelled || !live()) return true;
        addError(`Running ${origin.name} failed: ${message(e)}`);
        setRunError(message(e));
      } finally {
        if (live()) setProgress(null);
      }
      return true;
    },
    [addError, getClient, playhead],
  );

  const track = useCallback(async (work: () => Promise<void>) => {
    setBusyOps((n) => n + 1);
    try {
      await work();
    } finally {
      setBusyOps((n) => n - 1);
    }
  }, []);

  // Boot: the library, then the URL's scenario (or the default one).
  useEffect(() => {
    let cancelled = false;
    void (async () => {
      try {
        const idx = await loadIndex();
        if (cancelled) return;
        setIndex(idx);
        const ref = urlState.scenario;
        const restore: Restore = { time: urlState.time, view: urlState.view, hidden: urlState.hidden };
        if (ref?.kind === 'inline') {
          const origin = { id: null, name: 'The shared scenario', baseText: null };
          if (await start(ref.text, origin, urlState.policies, restore)) return;
          if (cancelled) return;
        }
        // A shared scenario that failed: the default one, at its own start.
        const fellBack = ref?.kind === 'inline';
        const wanted = ref?.kind === 'library' ? ref.id : idx.default;
        let entry = findEntry(idx, wanted);
        if (!entry) {
          addError(`There is no scenario "${wanted}" in the library; showing "${idx.default}" instead.`);
          entry = findEntry(idx, idx.default)!;
        }
        const base = await loadScenarioText(entry);
        if (cancelled) return;
        let text = base;
        if (ref?.kind === 'library' && ref.id === entry.id && ref.patch) {
          try {
            text = resolveLibraryRef(ref, base);
          } catch (e) {
            addError(`${e instanceof LinkError ? e.message : message(e)} Showing the library's version.`);
          }
        }
        const origin = { id: entry.id, name: entry.title, baseText: base };
        const ok = await start(text, origin, fellBack ? null : urlState.policies, fellBack ? {} : restore);
        // Edits that no longer validate (the library moved on): the library's own version instead.
        if (!ok && !cancelled && text !== base) await start(base, origin, urlState.policies, restore);
      } catch (e) {
        if (!cancelled) addError(`The scenario library could not be loaded: ${message(e)}`);
      } finally {
        if (!cancelled) setBusyOps((n) => n - 1);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [urlState, addError, start]);

  // Errors outside React's render (a rejected promise somewhere) still reach the banner.
  useEffect(() => {
    const onRejection = (e: PromiseRejectionEvent) => {
      if (e.reason instanceof Cancelled) return;
      addError(`Unexpected error: ${message(e.reason)}`);
    };
    window.addEventListener('unhandledrejection', onRejection);
    return () => window.removeEventListener('unhandledrejection', onRejection);
  }, [addError]);

  const selectScenario = useCallback(
    (id: string) => {
      const entry = index && findEntry(index, id);
      if (!entry) return;
      setErrors([]);
      void track(async () => {
        try {
          const text = await loadScenarioText(entry);
          await start(text, { id: entry.id, name: entry.title, baseText: text }, null);
        } catch (e) {
          addError(`${entry.title} could not be loaded: ${message(e)}`);
        }
      });
    },
    [index, start, track, addError],
  );

  /**
   * Runs the editor's draft. An edit of a library scenario (same id) stays linked to it, so its share link is
   * the id plus a patch; the columns, playhead and window stay where they were.
   */
  const submitOwn = useCallback(
    (text: string, name: string) => {
      setErrors([]);
      let id: unknown = null;
      let keep: string[] | null = null;
      try {
        const doc = JSON.parse(text) as { id?: unknown; policies?: { id?: unknown }[] };
        id = doc.id;
        const ids = (Array.isArray(doc.policies) ? doc.policies : []).map((p) => p?.id);
        keep = columns.filter((c) => ids.includes(c));
      } catch {
        // Not JSON: the simulator's validation names the problem.
      }
      const linked = current?.id != null && current.baseText !== null && id === current.id;
      const origin = linked
        ? { id: current.id, name: current.name, baseText: current.baseText }
        : { id: null, name, baseText: null };
      const restore = { time: playhead.time, view: playhead.view, hidden };
      void track(async () => {
        await start(text, origin, keep && keep.length > 0 ? keep : null, restore);
      });
    },
    [start, track, current, columns, hidden, playhead],
  );

  const changeColumns = useCallback(
    (next: string[]) => {
      setColumns(next);
      if (next.length !== columns.length) setHidden([]);
    },
    [columns],
  );

  const setColumn = useCallback(
    (i: number, policy: string) => changeColumns(columns.map((p, k) => (k === i ? policy : p))),
    [columns, changeColumns],
  );

  /** A new column with the first policy not on screen (or the first policy when all are). */
  const addColumn = useCallback(() => {
    const ids = (current?.doc.policies ?? []).map((p) => p.id);
    if (columns.length >= MAX_COLUMNS || ids.length === 0) return;
    changeColumns([...columns, ids.find((p) => !columns.includes(p)) ?? ids[0]!]);
  }, [current, columns, changeColumns]);

  const removeColumn = useCallback(
    (i: number) => {
      if (columns.length > 1) changeColumns(columns.filter((_, k) => k !== i));
    },
    [columns, changeColumns],
  );

  /** Shows or hides column `i` (keys 1-4, with more than two columns); one column always stays. */
  const toggleColumn = useCallback(
    (i: number) => {
      if (columns.length <= 2 || i >= columns.length) return;
      setHidden((h) =>
        h.includes(i) ? h.filter((k) => k !== i) : h.length + 1 >= columns.length ? h : [...h, i],
      );
    },
    [columns.length],
  );

  // Playback: advance the shared playhead every frame; the timelines' window follows it.
  useEffect(() => {
    if (!playing || durationMs <= 0) return;
    let raf = 0;
    let last = performance.now();
    const tick = (now: number) => {
      // Capped so a tab coming back from the background does not jump.
      const dt = Math.min(now - last, 100);
      last = now;
      const t = Math.min(durationMs, playhead.time + dt * speed);
      playhead.set({ time: t, view: follow(playhead.view, t, durationMs) });
      if (t >= durationMs) setPlaying(false);
      else raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [playing, speed, durationMs, playhead]);

  const ready = current !== null && columns.some((c) => runs[c]);

  const togglePlay = useCallback(() => {
    if (!ready) return;
    if (!playing && playhead.time >= durationMs) playhead.set({ time: 0 });
    setPlaying(!playing);
  }, [ready, playing, durationMs, playhead]);

  const seek = useCallback(
    (t: number) => playhead.set({ time: t, view: follow(playhead.view, t, durationMs) }),
    [durationMs, playhead],
  );

  /** Stops the runs in flight (a long scenario should never hold the page hostage). */
  const cancelRuns = useCallback(() => {
    genRef.current++;
    client.cancel();
    setProgress(null);
    setRunError('stopped by you');
  }, [client]);

  const onViewChange = useCallback((v: View) => setView(clampView(v, durationMs)), [durationMs, setView]);

  const shown = useMemo(
    () => columns.map((policy, i) => ({ policy, i })).filter(({ i }) => !hidden.includes(i)),
    [columns, hidden],
  );
  const firstRun = shown.map(({ policy }) => runs[policy]).find((r) => r !== undefined);

  /** Moves the playhead to the previous (-1) or next (1) decision of the first column shown. */
  const stepDecision = useCallback(
    async (dir: 1 | -1) => {
      if (!firstRun) return;
      setPlaying(false);
      try {
        const t = await client.adjacentDecision(firstRun.runId, toNs(playhead.time), dir);
        if (t !== null) seek(t / 1e6);
      } catch {
        // The run was released (a new scenario is loading): nothing to step through.
      }
    },
    [client, firstRun, seek, playhead],
  );

  const zoom = useCallback(
    (factor: number) => setView(zoomView(playhead.view, playhead.time, factor, durationMs)),
    [durationMs, setView, playhead],
  );

  // Keyboard: Space play/pause, arrows step through decisions, +/- zoom, 1-4 show/hide columns. Keys that the
  // focused control already uses (typing, lists, buttons for Space, the slider for arrows) are left to it.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const tag = (e.target as HTMLElement | null)?.tagName;
      switch (e.key) {
        case ' ':
          if (ownKey(e, false) || tag === 'BUTTON') return;
          e.preventDefault();
          if (!e.repeat) togglePlay();
          return;
        case 'ArrowLeft':
        case 'ArrowRight':
          if (ownKey(e, true)) return;
          e.preventDefault();
          void stepDecision(e.key === 'ArrowRight' ? 1 : -1);
          return;
        case '+':
        case '=':
        case '-':
        case '_':
          if (ownKey(e, false)) return;
          e.preventDefault();
          zoom(e.key === '-' || e.key === '_' ? 2 : 0.5);
          return;
        case '[':
        case ']':
          if (ownKey(e, false)) return;
          setSpeed((v) => nextSpeed(v, e.key === ']' ? 1 : -1));
          return;
        case '1':
        case '2':
        case '3':
        case '4':
          if (ownKey(e, false)) return;
          toggleColumn(Number(e.key) - 1);
          return;
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [togglePlay, stepDecision, zoom, toggleColumn]);

  // ?testing=1: idle once nothing is in flight and the last results have been painted (two frames later).
  useEffect(() => {
    if (!testing) return;
    if (busy || querying) {
      window.__schedlabIdle = false;
      return;
    }
    let second = 0;
    const first = requestAnimationFrame(() => {
      second = requestAnimationFrame(() => {
        window.__schedlabIdle = true;
      });
    });
    return () => {
      cancelAnimationFrame(first);
      cancelAnimationFrame(second);
    };
  }, [testing, busy, querying, runs, claims, columns]);

  const policies = useMemo(() => current?.doc.policies ?? [], [current]);
  const labelOf = useCallback((id: string) => policies.find((p) => p.id === id)?.label ?? id, [policies]);
  // Memoised: a new array would refetch every distribution on each playhead frame.
  const compared = useMemo<ComparedRun[]>(() => {
    const seen = new Set<string>();
    return shown.flatMap(({ policy }) => {
      const run = runs[policy];
      if (!run || seen.has(policy)) return [];
      seen.add(policy);
      return [{ policy, label: labelOf(policy), run }];
    });
  }, [shown, runs, labelOf]);

  // The address bar is the share link: written with what is on screen, at most every 100 ms (the browser
  // rate-limits history updates; scrubbing would exceed it), and never while playing (a moving playhead is not
  // a place to share). A layout effect, so the URL changes in the same commit as the page.
  const link = useMemo(() => {
    try {
      return current && scenarioLink(current.id, current.baseText, current.text);
    } catch {
      return null; // a scenario that is not JSON never gets here: start() validated it
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
  const lastUrlWrite = useRef(0);
  useLayoutEffect(() => {
    if (playing || shareSearch === null) return;
    const write = () => {
      lastUrlWrite.current = performance.now();
      if (window.location.search + window.location.hash !== shareSearch)
        window.history.replaceState(null, '', window.location.pathname + shareSearch);
    };
    const wait = lastUrlWrite.current + 100 - performance.now();
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
  const shareUrl =
    shareSearch === null ? '' : window.location.origin + window.location.pathname + shareSearch;

  /** Shows a lesson step: loads its scenario when another is on screen, else only moves the playhead. */
  const goToStep = useCallback(
    (id: string, step: number) => {
      const l = findLesson(id);
      const s = l?.steps[step];
      if (!l || !s) return;
      setLesson({ id, step });
      const entry = index && findEntry(index, s.scenario);
      if (!entry) {
        setLessonMissing(
          `This step uses the scenario "${s.scenario}", which is not in this build's library` +
            (PENDING_SCENARIOS.includes(s.scenario) ? ' yet (it is still being written).' : '.') +
            ' The text above still tells the story; the views show the previous scenario.',
        );
        return;
      }
      setLessonMissing(null);
      const restore: Restore = { time: s.t_ms, view: s.view_ms ?? null };
      const sameScenario = current?.id === entry.id && current.text === current.baseText;
      if (sameScenario && current) {
        if (s.policies && s.policies.join() !== columns.join()) changeColumns([...s.policies]);
        setPlaying(false);
        const dur = current.doc.duration_ms;
        const t = Math.min(s.t_ms, dur);
        playhead.set({
          time: t,
          view: s.view_ms ? clampView(s.view_ms, dur) : follow(playhead.view, t, dur),
        });
        return;
      }
      void track(async () => {
        try {
          const text = await loadScenarioText(entry);
          await start(text, { id: entry.id, name: entry.title, baseText: text }, s.policies ?? null, restore);
        } catch (e) {
          addError(`${entry.title} could not be loaded: ${message(e)}`);
        }
      });
    },
    [index, current, columns, changeColumns, track, start, addError, playhead],
  );
  const currentLesson = lesson ? findLesson(lesson.id) : undefined;
  const validateText = useCallback((text: string) => client.validate(text), [client]);
  // Stable props: the editor (a form of the whole scenario) must not re-render on every playhead frame.
  const editorCurrent = useMemo(() => current && { text: current.text, name: current.name }, [current]);
  const closeEditor = useCallback(() => togglePanel('editor', false), [togglePanel]);

  // Keys of the classroom: PageDown/PageUp step through a lesson (what presentation clickers send), P toggles
  // presentation mode and Escape leaves it.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || ownKey(e, false)) return;
      if ((e.key === 'PageDown' || e.key === 'PageUp') && lesson && currentLesson) {
        const next = lesson.step + (e.key === 'PageDown' ? 1 : -1);
        if (next >= 0 && next < currentLesson.steps.length) goToStep(lesson.id, next);
        e.preventDefault();
      } else if (e.key === 'p' || e.key === 'P') {
        setPresenting((v) => !v);
      } else if (e.key === 'Escape' && presenting) {
        setPresenting(false);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [lesson, currentLesson, goToStep, presenting]);

  return (
    <ThemeContext.Provider value={theme}>
      <div className={`app${presenting ? ' presenting' : ''}`} data-testid="app" data-presenting={presenting}>
        <a className="skip-link" href="#views">
          Skip to the views
        </a>
        <header className="topbar">
          <h1>schedlab</h1>
          <span className="muted tagline">hypervisor CPU scheduling, side by side</span>
          <nav className="tools" aria-label="Tools">
            {(['lessons', 'editor', 'export', 'share'] as const).map((p) => (
              <button
                key={p}
                type="button"
                data-testid={`open-${p}`}
                aria-pressed={open.includes(p)}
                aria-controls={open.includes(p) ? `panel-${p}` : undefined}
                onClick={() => togglePanel(p)}
                disabled={p !== 'lessons' && !current}
              >
                {{ lessons: 'Lessons', editor: 'Edit', export: 'Export', share: 'Share link' }[p]}
              </button>
            ))}
            <button
              type="button"
              data-testid="present"
              aria-pressed={presenting}
              onClick={() => setPresenting((v) => !v)}
              title="Presentation mode: large type, controls hidden (key P; Escape leaves)"
            >
              {presenting ? 'Leave presentation' : 'Present'}
            </button>
            <button
              type="button"
              data-testid="theme-toggle"
              aria-pressed={theme === 'dark'}
              onClick={toggleTheme}
              title="Light or dark theme"
            >
              {theme === 'dark' ? 'Light theme' : 'Dark theme'}
            </button>
          </nav>
        </header>
        <ErrorBanner messages={errors} onDismiss={() => setErrors([])} />
        <div className="layout">
          <aside>
            <Library
              index={index}
              loading={busyOps > 0}
              current={current?.id ?? null}
              onSelect={selectScenario}
            />
            <section className="loader" aria-label="Your scenario">
              <h2>Your scenario</h2>
              <p className="muted">Change the one on screen, paste or import your own, or export it.</p>
              <button type="button" onClick={() => togglePanel('editor', true)} disabled={!current}>
                Edit this scenario
              </button>
            </section>
          </aside>
          <main id="views" tabIndex={-1} data-view={`${view[0]},${view[1]}`}>
            {currentLesson && lesson && (
              <LessonPlayer
                lesson={currentLesson}
                step={lesson.step}
                missing={lessonMissing}
                onStep={(k) => goToStep(lesson.id, k)}
                onExit={() => {
                  setLesson(null);
                  setLessonMissing(null);
                }}
              />
            )}
            {open.includes('lessons') && (
              <div id="panel-lessons">
                <LessonPicker
                  available={(id) => Boolean(index && findEntry(index, id))}
                  onClose={() => togglePanel('lessons', false)}
                  onPick={(id) => {
                    togglePanel('lessons', false);
                    goToStep(id, 0);
                  }}
                />
              </div>
            )}
            {open.includes('share') && current && (
              <div id="panel-share">
                <SharePanel url={shareUrl} onClose={() => togglePanel('share', false)} />
              </div>
            )}
            {open.includes('export') && current && (
              <div id="panel-export">
                <ExportPanel
                  key={current.key}
                  client={client}
                  scenarioId={current.id ?? current.doc.id ?? null}
                  scenarioName={current.name}
                  runs={compared}
                  claims={claims}
                  view={view}
                  onError={addError}
                  onClose={() => togglePanel('export', false)}
                />
              </div>
            )}
            {open.includes('editor') && (
              <div id="panel-editor">
                <Editor
                  current={editorCurrent}
                  validate={validateText}
                  onRun={submitOwn}
                  onError={addError}
                  onClose={closeEditor}
                />
              </div>
            )}
            {current ? (
              <>
                <section className="scenario-head">
                  <h2>{current.doc.title ?? current.name}</h2>
                  {current.doc.summary && <ScenarioSummary key={current.key} text={current.doc.summary} />}
                  {current.doc.source && <p className="muted">Source: {current.doc.source}</p>}
                </section>
                <Transport
                  playhead={playhead}
                  durationMs={durationMs}
                  playing={playing}
                  speed={speed}
                  disabled={!ready}
                  onToggle={togglePlay}
                  onSpeed={setSpeed}
                  onScrub={seek}
                  onStep={(dir) => void stepDecision(dir)}
                />
                {progress !== null && (
                  <div className="progress" data-testid="progress">
                    <progress max={1} value={progress} />
                    <span>
                      Simulating {policies.length} {policies.length === 1 ? 'policy' : 'policies'}…{' '}
                      {Math.round(progress * 100)}%
                    </span>
                    <button type="button" data-testid="cancel-runs" onClick={cancelRuns}>
                      Stop
                    </button>
                  </div>
                )}
                <ErrorBoundary
                  resetKey={current.key}
                  fallback={(e, reset) => (
                    <ErrorBanner messages={[`A view failed to draw: ${e.message}`]}>
                      <button type="button" onClick={reset}>
                        Try again
                      </button>
                    </ErrorBanner>
                  )}
                >
                  <div className="column-bar">
                    {columns.length > 2 &&
                      columns.map((policy, i) => (
                        <button
                          key={i}
                          type="button"
                          className="column-toggle"
                          data-testid="column-toggle"
                          aria-pressed={!hidden.includes(i)}
                          onClick={() => toggleColumn(i)}
                          title={`Show or hide column ${i + 1} (key ${i + 1})`}
                        >
                          {i + 1} {labelOf(policy)}
                        </button>
                      ))}
                    {columns.length < MAX_COLUMNS && (
                      <button type="button" data-testid="add-column" onClick={addColumn} disabled={!ready}>
                        + Add column
                      </button>
                    )}
                    <span className="muted keys">
                      Keys: Space play · ←/→ previous/next decision · +/− zoom · [/] speed
                      {columns.length > 2 ? ' · 1-4 show/hide columns' : ''}
                    </span>
                  </div>
                  <div
                    className="columns"
                    style={{ gridTemplateColumns: `repeat(${shown.length}, minmax(0, 1fr))` }}
                  >
                    {shown.map(({ policy, i }) => (
                      <PolicyColumn
                        key={i}
                        index={i}
                        client={client}
                        onSeek={seek}
                        onRemove={columns.length > 1 ? () => removeColumn(i) : undefined}
                        policy={policy}
                        policies={policies}
                        run={runs[policy]}
                        failed={runs[policy] ? null : runError}
                        durationMs={durationMs}
                        playhead={playhead}
                        onViewChange={onViewChange}
                        onPolicyChange={(p) => setColumn(i, p)}
                      />
                    ))}
                  </div>
                  <ComparisonPanel client={client} runs={compared} />
                  <ClaimsPanel claims={claims} failed={runError} labelOf={labelOf} />
                </ErrorBoundary>
              </>
            ) : (
              <p className="muted placeholder">{busy ? 'Loading…' : 'Pick a scenario from the library.'}</p>
            )}
          </main>
        </div>
      </div>
    </ThemeContext.Provider>
  );
}
