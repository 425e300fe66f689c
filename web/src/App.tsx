// The page: the scenario library and loader on the left; on the right one scenario played under two (or more)
// policies side by side on one playhead, and the scenario's claims checked over all of its policies.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Cancelled, SimClient } from './sim/client';
import type { ClaimResult, RunResult, ScenarioDoc, ScenarioPolicy } from './sim/types';
import { findEntry, loadIndex, loadScenarioText, type ScenarioIndex } from './lib/scenarios';
import { parseUrl, toSearch, MAX_COLUMNS } from './lib/url';
import { chooseBucketMs } from './lib/series';
import { clampView, defaultView, follow, type View } from './lib/view';
import { ClaimsPanel } from './components/ClaimsPanel';
import { ErrorBanner } from './components/ErrorBanner';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Library } from './components/Library';
import { PolicyColumn } from './components/PolicyColumn';
import { ScenarioLoader } from './components/ScenarioLoader';
import { Transport } from './components/Transport';

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
  const timeRef = useRef(0);
  const clientRef = useRef<SimClient | null>(null);
  const genRef = useRef(0);

  const durationMs = current?.doc.duration_ms ?? 0;
  const busy = busyOps > 0 || progress !== null;

  const addError = useCallback(
    (m: string) => setErrors((prev) => (prev.includes(m) ? prev : [...prev, m])),
    [],
  );

  const getClient = useCallback(() => (clientRef.current ??= new SimClient()), []);
  useEffect(
    () => () => {
      clientRef.current?.dispose();
      clientRef.current = null;
    },
    [],
  );

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
      client.cancel();
      const cols = chooseColumns(doc.policies, preferred, addError);
      setCurrent({ key: gen, id: origin.id, name: origin.name, text, doc });
      setColumns(cols);
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

  const setColumn = useCallback(
    (i: number, policy: string) => {
      const next = columns.map((p, k) => (k === i ? policy : p));
      setColumns(next);
      writeUrl(current?.id ?? null, next);
    },
    [columns, current, writeUrl],
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
    clientRef.current?.cancel();
    setProgress(null);
    setRunError('stopped by you');
  }, []);

  const onViewChange = useCallback((v: View) => setView(clampView(v, durationMs)), [durationMs]);

  // Space toggles play/pause, except where Space already means something (typing, buttons, lists).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== ' ' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t) {
        const tag = t.tagName;
        if (t.isContentEditable || tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'BUTTON') return;
        if (tag === 'INPUT' && (t as HTMLInputElement).type !== 'range') return;
      }
      e.preventDefault();
      if (!e.repeat) togglePlay();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [togglePlay]);

  // ?testing=1: idle once nothing is in flight and the last results have been painted (two frames later).
  useEffect(() => {
    if (!testing) return;
    if (busy) {
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
  }, [testing, busy, runs, claims, columns]);

  const policies = current?.doc.policies ?? [];
  const labelOf = (id: string) => policies.find((p) => p.id === id)?.label ?? id;

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
                <div
                  className="columns"
                  style={{ gridTemplateColumns: `repeat(${columns.length}, minmax(0, 1fr))` }}
                >
                  {columns.map((policy, i) => (
                    <PolicyColumn
                      key={i}
                      policy={policy}
                      policies={policies}
                      run={runs[policy]}
                      failed={runs[policy] ? null : runError}
                      durationMs={durationMs}
                      view={view}
                      time={time}
                      onViewChange={onViewChange}
                      onPolicyChange={(p) => setColumn(i, p)}
                    />
                  ))}
                </div>
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
