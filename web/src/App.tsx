// The page: the scenario library and loader on the left; on the right one scenario played under two (or more)
// policies side by side on one playhead, and the scenario's claims checked over all of its policies.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Cancelled, SimClient } from './sim/client';
import type { ClaimResult, RunResult, ScenarioDoc, ScenarioPolicy } from './sim/types';
import { findEntry, loadIndex, loadScenarioText, type ScenarioIndex } from './lib/scenarios';
import { parseUrl, toSearch, MAX_COLUMNS } from './lib/url';
import { chooseBucketMs } from './lib/series';
import { clampView, defaultView, follow, zoomView, type View } from './lib/view';
import { toNs } from './lib/decisions';
import { ClaimsPanel } from './components/ClaimsPanel';
import { ComparisonPanel, type ComparedRun } from './components/ComparisonPanel';
import { ErrorBanner } from './components/ErrorBanner';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Library } from './components/Library';
import { PolicyColumn } from './components/PolicyColumn';
import { ScenarioLoader } from './components/ScenarioLoader';
import { Transport } from './components/Transport';
import { nextSpeed } from './lib/speed';

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
}

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
  const [urlState] = useState(() => parseUrl(window.location.search));
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
  const [time, setTime] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(0.25);
  const [view, setView] = useState<View>([0, 1]);
  /** Columns (by index) hidden with the 1-4 keys; cleared whenever the columns change. */
  const [hidden, setHidden] = useState<readonly number[]>([]);
  /** Playhead queries in flight (only tracked for the ?testing=1 idle hook). */
  const [querying, setQuerying] = useState(false);
  const timeRef = useRef(0);
  const [client] = useState(() => new SimClient());
  const genRef = useRef(0);

  const durationMs = current?.doc.duration_ms ?? 0;
  const busy = busyOps > 0 || progress !== null;
  const viewRef = useRef(view);
  useEffect(() => {
    viewRef.current = view;
  }, [view]);

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

  const writeUrl = useCallback(
    (id: string | null, cols: readonly string[]) => {
      const search = toSearch({ scenario: id, policies: id ? cols : null, testing }, window.location.search);
      window.history.replaceState(null, '', window.location.pathname + search);
    },
    [testing],
  );

  /** Validates, then (only if valid) replaces what is on screen and runs every policy. */
  const start = useCallback(
    async (
      text: string,
      origin: { id: string | null; name: string },
      preferred: readonly string[] | null,
    ) => {
      const client = getClient();
      let problem: string | null;
      try {
        problem = await client.validate(text);
      } catch (e) {
        addError(`${origin.name}: the simulator could not check it (${message(e)}).`);
        return;
      }
      if (problem !== null) {
        addError(`${origin.name} was not loaded: ${problem}`);
        return;
      }
      const doc = JSON.parse(text) as ScenarioDoc;
      const policyIds = doc.policies.map((p) => p.id);
      if (policyIds.length === 0) {
        addError(`${origin.name} lists no policies to run.`);
        return;
      }
      const gen = ++genRef.current;
      const live = () => gen === genRef.current;
      // A new scenario: stop its predecessor's runs and free the finished ones the views were querying.
      client.reset();
      const cols = chooseColumns(doc.policies, preferred, addError);
      setCurrent({ key: gen, id: origin.id, name: origin.name, text, doc });
      setColumns(cols);
      setHidden([]);
      setRuns({});
      setClaims(null);
      setRunError(null);
      setProgress(0);
      setPlaying(false);
      setTime(0);
      timeRef.current = 0;
      setView(defaultView(doc.duration_ms));
      writeUrl(origin.id, cols);

      // The columns on screen run first so they draw while the others finish.
      const order = [...cols, ...policyIds.filter((p) => !cols.includes(p))];
      try {
        const results = await client.runAll(text, order, chooseBucketMs(doc.duration_ms), {
          onProgress: (f) => live() && setProgress(f),
          onRun: (run) => live() && setRuns((prev) => ({ ...prev, [run.policy]: run })),
        });
        if (!live()) return;
        const checked = await client.claims(
          text,
          results.map((r) => r.report),
        );
        if (live()) setClaims(checked);
      } catch (e) {
        if (e instanceof Cancelled || !live()) return;
        addError(`Running ${origin.name} failed: ${message(e)}`);
        setRunError(message(e));
      } finally {
        if (live()) setProgress(null);
      }
    },
    [addError, getClient, writeUrl],
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
        let entry = findEntry(idx, urlState.scenario ?? idx.default);
        if (!entry) {
          addError(
            `There is no scenario "${urlState.scenario}" in the library; showing "${idx.default}" instead.`,
          );
          entry = findEntry(idx, idx.default)!;
        }
        const text = await loadScenarioText(entry);
        if (cancelled) return;
        await start(text, { id: entry.id, name: entry.title }, urlState.policies);
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
          await start(await loadScenarioText(entry), { id: entry.id, name: entry.title }, null);
        } catch (e) {
          addError(`${entry.title} could not be loaded: ${message(e)}`);
        }
      });
    },
    [index, start, track, addError],
  );

  const submitOwn = useCallback(
    (text: string, name: string) => {
      setErrors([]);
      void track(() => start(text, { id: null, name }, null));
    },
    [start, track],
  );

  const changeColumns = useCallback(
    (next: string[]) => {
      setColumns(next);
      if (next.length !== columns.length) setHidden([]);
      writeUrl(current?.id ?? null, next);
    },
    [columns, current, writeUrl],
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
      const t = Math.min(durationMs, timeRef.current + dt * speed);
      timeRef.current = t;
      setTime(t);
      setView((v) => follow(v, t, durationMs));
      if (t >= durationMs) setPlaying(false);
      else raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [playing, speed, durationMs]);

  const ready = current !== null && columns.some((c) => runs[c]);

  const togglePlay = useCallback(() => {
    if (!ready) return;
    if (!playing && timeRef.current >= durationMs) {
      timeRef.current = 0;
      setTime(0);
    }
    setPlaying(!playing);
  }, [ready, playing, durationMs]);

  const seek = useCallback(
    (t: number) => {
      timeRef.current = t;
      setTime(t);
      setView((v) => follow(v, t, durationMs));
    },
    [durationMs],
  );

  /** Stops the runs in flight (a long scenario should never hold the page hostage). */
  const cancelRuns = useCallback(() => {
    genRef.current++;
    client.cancel();
    setProgress(null);
    setRunError('stopped by you');
  }, [client]);

  const onViewChange = useCallback((v: View) => setView(clampView(v, durationMs)), [durationMs]);

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
        const t = await client.adjacentDecision(firstRun.runId, toNs(timeRef.current), dir);
        if (t !== null) seek(t / 1e6);
      } catch {
        // The run was released (a new scenario is loading): nothing to step through.
      }
    },
    [client, firstRun, seek],
  );

  const zoom = useCallback(
    (factor: number) => setView(zoomView(viewRef.current, timeRef.current, factor, durationMs)),
    [durationMs],
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

  return (
    <div className="app">
      <header className="topbar">
        <h1>schedlab</h1>
        <span className="muted">hypervisor CPU scheduling, side by side</span>
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
          <ScenarioLoader currentText={current?.text ?? null} onSubmit={submitOwn} onError={addError} />
        </aside>
        <main>
          {current ? (
            <>
              <section className="scenario-head">
                <h2>{current.doc.title ?? current.name}</h2>
                {current.doc.summary && <p>{current.doc.summary}</p>}
                {current.doc.source && <p className="muted">Source: {current.doc.source}</p>}
              </section>
              <Transport
                time={time}
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
                      view={view}
                      time={time}
                      playing={playing}
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
  );
}
