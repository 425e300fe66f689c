// The scenario on screen and its runs: boot (the library, then the share link's scenario or the default one),
// loading a library entry or the editor's draft, and running every policy in the simulation workers, then
// judging the scenario's claims over all of them. A column on a claim's ablation (`POLICY~wK`) runs once those
// are done: the simulator patches the scenario, the claim's policies run on it, and the claim is judged there.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Cancelled, SimClient } from '../sim/client';
import type {
  AblationRuns,
  ClaimResult,
  Cost,
  RunOpening,
  RunResult,
  ScenarioDoc,
  Verdict,
} from '../sim/types';
import {
  findEntry,
  loadIndex,
  loadScenarioText,
  prefetchScenario,
  type ScenarioEntry,
  type ScenarioIndex,
} from '../lib/scenarios';
import { LinkError, resolveLibraryRef, type ShareState } from '../lib/share';
import { parseColumnId, registryPolicy } from '../lib/columns';
import { titleOf } from '../lib/drafts';
import { chooseBucketMs } from '../lib/series';
import { nsWindow, type View } from '../lib/view';
import type { Playhead } from '../lib/playhead';
import { markOnce, markOpening, markRun } from '../lib/marks';
import { message } from './useErrors';

export interface Current {
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
export interface Restore {
  readonly time?: number | null;
  readonly view?: View | null;
  readonly hidden?: readonly number[];
}

/** Where a scenario's text came from. */
interface Origin {
  readonly id: string | null;
  readonly name: string;
  readonly baseText: string | null;
}

export interface ScenarioRunsDeps {
  /** The page's URL, parsed once. */
  readonly urlState: ShareState;
  readonly addError: (m: string) => void;
  readonly clearErrors: () => void;
  /** The column ids on screen: the ablated ones among them get their runs here. */
  readonly columns: readonly string[];
  /** Chooses the new scenario's columns (the preferred ones when it has them) and which are hidden. */
  readonly layout: (
    scenario: ScenarioDoc,
    preferred: readonly string[] | null,
    hidden?: readonly number[],
  ) => readonly string[];
  /** Resets playback for the new scenario: its duration, the playhead and the window. */
  readonly load: (durationMs: number, time?: number | null, view?: View | null) => void;
  /** The shared playhead: a run's opening window is the one the timelines show when it starts. */
  readonly playhead: Playhead;
}

/** A column's run on a claim's ablated scenario, and the claim judged there. */
export interface AblatedRun {
  /** The ablation's label (what it switches off). */
  readonly label: string;
  /** The claim judged on the ablated scenario's runs (it should fail). */
  readonly claim: ClaimResult | null;
  /** Why the ablated run failed, if it did. */
  readonly error: string | null;
  /** The claim's verdict with this ablation judged (the simulator's: holds, not credited, ablation broken...). */
  readonly verdict?: Verdict | null;
}

/** Links whose runs are estimated to take longer than this ask first [s] (a link must not start hours). */
export const COST_ASK_SECONDS = 20;

/** A shared link's scenario waiting for the user to accept its estimated cost. */
export interface CostAsk {
  readonly name: string;
  /** The estimate in words (events, time, memory). */
  readonly estimate: string;
  readonly answer: (run: boolean) => void;
}

export interface ScenarioRuns {
  readonly client: SimClient;
  /** A link's scenario estimated to run long, waiting for the user's yes or no. */
  readonly costAsk: CostAsk | null;
  /** The library, once loaded. */
  readonly index: ScenarioIndex | null;
  readonly current: Current | null;
  /** Finished runs by column id (policy id, or `POLICY~wK` for an ablated run). */
  readonly runs: Readonly<Record<string, RunResult>>;
  /** Each column's opening window while its run goes on (drawn first: the first frame does not wait for runs). */
  readonly openings: Readonly<Record<string, RunOpening>>;
  /** The claims, once every run finished and they were judged. */
  readonly claims: ClaimResult[] | null;
  /** The ablated (and registry) columns' outcomes by column id, once each finished. */
  readonly ablated: Readonly<Record<string, AblatedRun>>;
  /** Ablated runs are queued or in flight. */
  readonly ablating: boolean;
  /** Why the current scenario's runs stopped, if they failed. */
  readonly runError: string | null;
  /** Why a policy's run failed, by policy id (a script's runtime error): the other columns keep their runs. */
  readonly failures: Readonly<Record<string, string>>;
  /** A policy's run is re-running after an edit of its script (`updatePolicies`), by policy id. */
  readonly rerunning: readonly string[];
  /** Overall progress of the runs (0..1) while they run, else null. */
  readonly progress: number | null;
  /** A scenario is being loaded (boot, a library pick, a draft, a lesson step). */
  readonly loading: boolean;
  /** Playhead queries in flight (tracked only with `?testing=1`). */
  readonly querying: boolean;
  /** Shows the library scenario `id` with its first columns (the banner's old errors go). */
  readonly selectScenario: (id: string) => void;
  /** Loads a library entry and runs it with the preferred columns, from `restore`. */
  readonly openEntry: (entry: ScenarioEntry, preferred: readonly string[] | null, restore?: Restore) => void;
  /**
   * Runs the editor's draft `text` (named `name` unless it is the library scenario on screen), keeping those of
   * `columns` it still has, from `restore`; old errors go. An edit of a library scenario (same id) stays linked
   * to it, so its share link is the id plus a patch.
   */
  readonly runDraft: (text: string, name: string, columns: readonly string[], restore: Restore) => void;
  /** Stops the runs in flight (a long scenario should never hold the page hostage). */
  readonly cancelRuns: () => void;
  /**
   * Puts `text` on screen, a scenario that differs from the one shown only in the policies `ids` (added, or
   * their params changed: a script edited), and runs those alone: the other columns keep their runs, and the
   * claims are judged again over all of them. Resolves with the simulator's message when the text is invalid
   * (nothing changes then), else null once the runs are done. `onShown` is called once the text is on screen
   * (a new policy may then become a column).
   */
  readonly updatePolicies: (
    text: string,
    ids: readonly string[],
    onShown?: () => void,
  ) => Promise<string | null>;
}

export function useScenarioRuns({
  urlState,
  addError,
  clearErrors,
  columns,
  layout,
  load,
  playhead,
}: ScenarioRunsDeps): ScenarioRuns {
  const testing = urlState.testing;
  const [client] = useState(() => new SimClient());
  /** How many columns the link that opened the page names (its workers are started at once). */
  const [linkColumns] = useState(() => urlState.policies?.length ?? 0);
  /** The window a run opens at: the view the timelines show as it starts, so that a column draws as soon as
   * its run has passed the view's end (its lanes come ahead of the run; the worker cuts the window to the run's
   * longest). Decided here only. */
  const opening = useCallback(
    (durationMs: number) => {
      const [a, b] = playhead.get().view;
      return nsWindow(Math.min(a, durationMs), Math.min(b, durationMs));
    },
    [playhead],
  );
  const [index, setIndex] = useState<ScenarioIndex | null>(null);
  const [current, setCurrent] = useState<Current | null>(null);
  const [runs, setRuns] = useState<Readonly<Record<string, RunResult>>>({});
  const [openings, setOpenings] = useState<Readonly<Record<string, RunOpening>>>({});
  const [claims, setClaims] = useState<ClaimResult[] | null>(null);
  const [runError, setRunError] = useState<string | null>(null);
  const [failures, setFailures] = useState<Readonly<Record<string, string>>>({});
  const [rerunning, setRerunning] = useState<readonly string[]>([]);
  /** The runs on screen, for judging claims after a partial re-run. */
  const runsRef = useRef<Readonly<Record<string, RunResult>>>({});
  useEffect(() => {
    runsRef.current = runs;
  }, [runs]);
  /** The latest partial re-run of each policy (a newer edit makes an older run's answer stale). */
  const rerunRef = useRef(new Map<string, number>());
  const [progress, setProgress] = useState<number | null>(null);
  const [busyOps, setBusyOps] = useState(1); // the boot sequence counts as one
  const [querying, setQuerying] = useState(false);
  const [ablated, setAblated] = useState<Readonly<Record<string, AblatedRun>>>({});
  const [ablating, setAblating] = useState(0);
  const genRef = useRef(0);
  /** Ablated columns already queued, as `generation|column id`. */
  const queuedRef = useRef(new Set<string>());
  /** Ablated runs go one after another, behind the scenario's own runs (they share the run workers). */
  const chainRef = useRef<Promise<void>>(Promise.resolve());

  useEffect(() => {
    // The workers and the simulator's compile start now, while the library and the scenario load: one per
    // column the link names.
    client.warm(linkColumns);
    if (testing) client.onQueries(setQuerying);
    return () => {
      client.onQueries(null);
      client.dispose();
    };
  }, [client, testing, linkColumns]);

  const [costAsk, setCostAsk] = useState<CostAsk | null>(null);

  /**
   * Resolves true at once when running `text` is estimated to take at most COST_ASK_SECONDS; otherwise asks the
   * user (the page shows `costAsk`) and resolves with the answer. An invalid scenario resolves true: `start`
   * reports what is wrong with it.
   */
  const confirmCost = useCallback(
    async (text: string, name: string): Promise<boolean> => {
      let cost: Cost;
      try {
        cost = await client.cost(text, []);
        markOnce('cost');
      } catch {
        return true;
      }
      if (cost.seconds <= COST_ASK_SECONDS) return true;
      return new Promise<boolean>((resolve) =>
        setCostAsk({
          name: titleOf(text, name),
          estimate: cost.text,
          answer: (run) => {
            setCostAsk(null);
            resolve(run);
          },
        }),
      );
    },
    [client],
  );

  /** Validates, then (only if valid) replaces what is on screen and runs every policy. */
  const start = useCallback(
    async (
      text: string,
      origin: Origin,
      preferred: readonly string[] | null,
      restore: Restore = {},
    ): Promise<boolean> => {
      // The library's own files are checked by the tests (`schedsim check`): they go straight to the run
      // workers, which validate them again anyway, instead of waiting for the helper first (cold start).
      if (origin.baseText === null || text !== origin.baseText) {
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
      }
      markOnce('validated');
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
      const cols = layout(doc, preferred, restore.hidden);
      setCurrent({ key: gen, id: origin.id, name: origin.name, text, doc, baseText: origin.baseText });
      setRuns({});
      setOpenings({});
      setAblated({});
      setClaims(null);
      setRunError(null);
      setFailures({});
      setRerunning([]);
      rerunRef.current.clear();
      setProgress(0);
      load(doc.duration_ms, restore.time, restore.view);

      // The columns on screen run first so they draw while the others finish.
      const first = cols.filter((c) => policyIds.includes(c));
      const order = [...first, ...policyIds.filter((p) => !first.includes(p))];
      try {
        const results = await client.runAll(
          text,
          order,
          chooseBucketMs(doc.duration_ms),
          opening(doc.duration_ms),
          {
            shown: first.length,
            onOpening: (o) => {
              markOpening(o.policy, o.openedTiming);
              if (live()) setOpenings((prev) => ({ ...prev, [o.policy]: o }));
            },
            onProgress: (f) => live() && setProgress(f),
            onRun: (run) => {
              markRun(run.policy, run.timing);
              if (live()) setRuns((prev) => ({ ...prev, [run.policy]: run }));
            },
            // A policy that fails (a script's runtime error) says why in its column; the others run on.
            onFail: (policy, e) => {
              if (!live()) return;
              addError(`${origin.name}: the run of ${policy} failed: ${message(e)}`);
              setFailures((prev) => ({ ...prev, [policy]: message(e) }));
            },
          },
        );
        if (!live()) return true;
        const checked = await client.claims(
          text,
          results.map((r) => r.report),
        );
        markOnce('claims');
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
    [addError, client, layout, load, opening],
  );

  // Ablated columns: once the scenario's runs are done and judged, each new one runs its claim's ablation.
  useEffect(() => {
    if (!current || claims === null) return;
    const live = () => genRef.current === current.key;
    for (const id of columns) {
      const ref = parseColumnId(id);
      const k = ref?.ablation;
      const scheduler = ref?.scheduler;
      if (!ref || (k == null && !scheduler) || queuedRef.current.has(`${current.key}|${id}`)) continue;
      queuedRef.current.add(`${current.key}|${id}`);
      setAblating((n) => n + 1);
      if (scheduler) {
        // A scheduler of the registry the scenario does not list: the scenario plus one policy with its
        // default parameters, run alone (the scenario's claims stay judged on its own policies).
        const policy = registryPolicy(scheduler);
        const label = `${scheduler} with default parameters`;
        chainRef.current = chainRef.current.then(async () => {
          try {
            if (!live()) return;
            const doc = JSON.parse(current.text) as { policies: unknown[]; changes?: unknown[] };
            const text = JSON.stringify({ ...doc, policies: [...doc.policies, policy] });
            const problem = await client.validate(text);
            if (problem !== null) throw new Error(problem);
            const ms = current.doc.duration_ms;
            await client.runAll(text, [policy.id], chooseBucketMs(ms), opening(ms), {
              onRun: (run) => live() && setRuns((prev) => ({ ...prev, [id]: run })),
            });
            if (live()) setAblated((prev) => ({ ...prev, [id]: { label, claim: null, error: null } }));
          } catch (e) {
            if (e instanceof Cancelled || !live()) return;
            addError(`The column running ${label} failed: ${message(e)}`);
            setAblated((prev) => ({ ...prev, [id]: { label, claim: null, error: message(e) } }));
          } finally {
            setAblating((n) => n - 1);
          }
        });
        continue;
      }
      if (k == null) continue;
      const label = current.doc.claims?.[k]?.without?.label ?? `claim ${k}'s ablation`;
      /** Claim k's verdict over the scenario's runs on screen, with its ablation as far as it went. */
      const verdictWith = async (ablation: AblationRuns): Promise<Verdict | null> => {
        const reports = current.doc.policies
          .map((p) => runsRef.current[p.id]?.report)
          .filter((r) => r !== undefined);
        const judged = await client.claims(current.text, reports, { [k]: ablation });
        return judged[k]?.verdict ?? null;
      };
      chainRef.current = chainRef.current.then(async () => {
        try {
          if (!live()) return;
          const ab = await client.ablation(current.text, k);
          // The column's policy first (it draws as soon as it is done), then the others the claim compares it with.
          const order = [ref.policy, ...ab.reads.filter((p) => p !== ref.policy)];
          const ms = current.doc.duration_ms;
          const results = await client.runAll(ab.scenario, order, chooseBucketMs(ms), opening(ms), {
            onRun: (run) =>
              live() && run.policy === ref.policy && setRuns((prev) => ({ ...prev, [id]: run })),
          });
          if (!live()) return;
          const reports = results.map((r) => r.report);
          const judged = await client.claims(ab.scenario, reports);
          const verdict = await verdictWith({ runs: reports });
          if (live())
            setAblated((prev) => ({
              ...prev,
              [id]: { label: ab.label, claim: judged[k] ?? null, error: null, verdict },
            }));
        } catch (e) {
          if (e instanceof Cancelled || !live()) return;
          addError(`The run without "${label}" failed: ${message(e)}`);
          // The ablation could not be made: the claim's verdict says so (broken), never "fails without".
          const verdict = await verdictWith({ error: message(e) }).catch(() => null);
          if (!live()) return;
          setAblated((prev) => ({ ...prev, [id]: { label, claim: null, error: message(e), verdict } }));
        } finally {
          setAblating((n) => n - 1);
        }
      });
    }
  }, [columns, current, claims, client, addError, opening]);

  /** Counts `work` as a load in progress. */
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
        if (urlState.scenario?.kind === 'library') prefetchScenario(urlState.scenario.id);
        const idx = await loadIndex();
        markOnce('index');
        if (cancelled) return;
        setIndex(idx);
        const ref = urlState.scenario;
        const restore: Restore = { time: urlState.time, view: urlState.view, hidden: urlState.hidden };
        if (ref?.kind === 'inline') {
          const origin = { id: null, name: 'The shared scenario', baseText: null };
          if (
            (await confirmCost(ref.text, origin.name)) &&
            (await start(ref.text, origin, urlState.policies, restore))
          )
            return;
          if (cancelled) return;
        }
        // A shared scenario that failed or was declined: the default one, at its own start.
        let fellBack = ref?.kind === 'inline';
        const wanted = ref?.kind === 'library' ? ref.id : idx.default;
        let entry = findEntry(idx, wanted);
        if (!entry) {
          addError(`There is no scenario "${wanted}" in the library; showing "${idx.default}" instead.`);
          entry = findEntry(idx, idx.default)!;
        }
        let base = await loadScenarioText(entry);
        markOnce('scenario');
        if (cancelled) return;
        let text = base;
        if (ref?.kind === 'library' && ref.id === entry.id && ref.patch) {
          try {
            text = resolveLibraryRef(ref, base);
          } catch (e) {
            addError(`${e instanceof LinkError ? e.message : message(e)} Showing the library's version.`);
          }
        }
        // A link to a library file as it is costs what picking it in the library costs, which never asks; one
        // with edits may have been made to run for hours.
        if (
          ref?.kind === 'library' &&
          ref.id === entry.id &&
          text !== base &&
          !(await confirmCost(text, entry.title))
        ) {
          if (cancelled) return;
          entry = findEntry(idx, idx.default)!;
          base = await loadScenarioText(entry);
          text = base;
          fellBack = true;
        }
        if (cancelled) return;
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
  }, [urlState, addError, start, confirmCost]);

  const openEntry = useCallback(
    (entry: ScenarioEntry, preferred: readonly string[] | null, restore: Restore = {}) => {
      void track(async () => {
        try {
          const text = await loadScenarioText(entry);
          await start(text, { id: entry.id, name: entry.title, baseText: text }, preferred, restore);
        } catch (e) {
          addError(`${entry.title} could not be loaded: ${message(e)}`);
        }
      });
    },
    [track, start, addError],
  );

  const selectScenario = useCallback(
    (id: string) => {
      const entry = index && findEntry(index, id);
      if (!entry) return;
      clearErrors();
      openEntry(entry, null);
    },
    [index, openEntry, clearErrors],
  );

  const runDraft = useCallback(
    (text: string, name: string, columns: readonly string[], restore: Restore) => {
      clearErrors();
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
      void track(async () => {
        await start(text, origin, keep && keep.length > 0 ? keep : null, restore);
      });
    },
    [track, start, clearErrors, current],
  );

  const updatePolicies = useCallback(
    async (text: string, ids: readonly string[], onShown?: () => void): Promise<string | null> => {
      const shown = current;
      if (!shown) return 'no scenario on screen';
      const problem = await client.validate(text);
      if (problem !== null) return problem;
      if (genRef.current !== shown.key) return null; // another scenario came meanwhile
      const doc = JSON.parse(text) as ScenarioDoc;
      const gen = shown.key;
      const mine = new Map(ids.map((id) => [id, (rerunRef.current.get(id) ?? 0) + 1]));
      for (const [id, n] of mine) rerunRef.current.set(id, n);
      const live = (id: string) => genRef.current === gen && rerunRef.current.get(id) === mine.get(id);
      setCurrent((c) => (c && c.key === gen ? { ...c, text, doc } : c));
      setFailures((prev) => Object.fromEntries(Object.entries(prev).filter(([p]) => !ids.includes(p))));
      setRerunning((prev) => [...new Set([...prev, ...ids])]);
      onShown?.();
      const old = ids.map((id) => runsRef.current[id]?.runId).filter((r): r is string => r !== undefined);
      try {
        await client.runAll(text, ids, chooseBucketMs(doc.duration_ms), opening(doc.duration_ms), {
          onRun: (run) => {
            if (!live(run.policy)) return;
            runsRef.current = { ...runsRef.current, [run.policy]: run };
            setRuns((prev) => ({ ...prev, [run.policy]: run }));
          },
          onFail: (policy, e) => {
            if (!live(policy)) return;
            const drop = (prev: Readonly<Record<string, RunResult>>) =>
              Object.fromEntries(Object.entries(prev).filter(([p]) => p !== policy));
            runsRef.current = drop(runsRef.current);
            setRuns(drop);
            setFailures((prev) => ({ ...prev, [policy]: message(e) }));
          },
        });
        if (!ids.every(live)) return null;
        // The replaced runs are no longer drawn: free them in their workers.
        client.release(old);
        // The claims over every policy's latest run.
        const reports = doc.policies.map((p) => runsRef.current[p.id]?.report).filter((r) => r !== undefined);
        const checked = await client.claims(text, reports);
        if (ids.every(live)) setClaims(checked);
      } catch (e) {
        if (e instanceof Cancelled || genRef.current !== gen) return null;
        addError(`Running the edited policy failed: ${message(e)}`);
      } finally {
        // A newer edit of the same policy clears its own flag.
        setRerunning((prev) => prev.filter((p) => !(mine.has(p) && rerunRef.current.get(p) === mine.get(p))));
      }
      return null;
    },
    [client, current, addError, opening],
  );

  const cancelRuns = useCallback(() => {
    genRef.current++;
    client.cancel();
    setProgress(null);
    setRunError('stopped by you');
  }, [client]);

  return {
    client,
    costAsk,
    index,
    current,
    runs,
    openings,
    claims,
    ablated,
    ablating: ablating > 0,
    runError,
    failures,
    rerunning,
    progress,
    loading: busyOps > 0,
    querying,
    selectScenario,
    openEntry,
    runDraft,
    cancelRuns,
    updatePolicies,
  };
}
