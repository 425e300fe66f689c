// The page: the scenario library and loader on the left; on the right one scenario played under two (or more)
// policies side by side on one playhead, and the scenario's claims checked over all of its policies. The shell
// only wires the hooks of ./app together (scenario runs, columns, playback, share link, keys, lessons) and lays
// out the views.
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { findEntry } from './lib/scenarios';
import { MAX_COLUMNS } from './lib/url';
import { parseShareUrl, type ShareState } from './lib/share';
import { PresentingContext, ThemeContext, useTheme } from './lib/theme';
import { nextSpeed } from './lib/speed';
import {
  ablationName,
  columnId,
  insertColumn,
  parseColumnId,
  registryColumnId,
  SCHEDULERS,
} from './lib/columns';
import { claimPolicies, scenarioFocus } from './lib/focus';
import { sameJson } from './lib/editorSchema';
import { ClaimsPanel } from './components/ClaimsPanel';
import { ComparisonPanel, type ComparedRun } from './components/ComparisonPanel';
import { CostConfirm } from './components/CostConfirm';
import { ErrorBanner } from './components/ErrorBanner';
import { isChunkLoadError, STALE_BUILD_HINT } from './lib/staleBuild';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Library } from './components/Library';
import { PolicyColumn, type PolicyColumnProps } from './components/PolicyColumn';
import { Transport } from './components/Transport';
import { Editor } from './components/Editor';
import { ExportPanel } from './components/ExportPanel';
import { TemplateMenu } from './components/TemplateMenu';
import { addScriptPolicy, scriptPolicies, templateFor, type ScriptTemplate } from './lib/script';
import { HomeworkPlayer, LessonPicker, LessonPlayer } from './components/Lessons';
import { findHomework, findLesson, linkWithLesson, stepMarks } from './lib/lessons';
import { pushHistory } from './lib/drafts';
import { localStore } from './app/useTabDraft';
import { SharePanel } from './components/SharePanel';
import { ScenarioSummary } from './components/ScenarioSummary';
import { KeyFigures } from './components/KeyFigures';
import { KeyHelp } from './components/KeyHelp';
import { About, Glossary, GlossaryContext } from './components/Reference';
import { useErrors } from './app/useErrors';
import { usePanels } from './app/usePanels';
import { useColumns, whyNotToggle } from './app/useColumns';
import { useDecisionStep, usePlayback } from './app/usePlayback';
import { useScenarioRuns } from './app/useScenarioRuns';
import { useLessons } from './app/useLessons';
import { useShortcuts } from './app/useShortcuts';
import { useShareUrl } from './app/useShareUrl';
import { useTestingIdle } from './app/useTestingIdle';
import { useRecorded } from './app/useRecorded';
import { RecordedPanel } from './components/RecordedPanel';
import { FIRST_FRAME, useMarkWhenDrawn } from './lib/marks';

/** The policy editor, loaded when first opened (it loads CodeMirror in turn): the first download stays as it was. */
const PolicyEditor = lazy(() => import('./components/PolicyEditor'));

export function App() {
  const [urlState] = useState(() =>
    linkWithLesson(parseShareUrl(window.location.search, window.location.hash)),
  );
  const testing = urlState.testing;
  const { errors, addError, clearErrors } = useErrors(urlState.errors);
  const { open, togglePanel } = usePanels(urlState.open);
  const [presenting, setPresenting] = useState(urlState.present);
  const [helpOpen, setHelpOpen] = useState(false);
  /** The glossary's open entry (null: its top), undefined while it is closed. */
  const [glossaryAt, setGlossaryAt] = useState<string | null | undefined>(undefined);
  const [aboutOpen, setAboutOpen] = useState(false);
  // Presentation starts at the top: the key figures and the timelines are laid out to fit the first screen.
  useEffect(() => {
    if (presenting) window.scrollTo({ top: 0 });
  }, [presenting]);
  const [theme, toggleTheme] = useTheme();

  const playback = usePlayback(urlState.speed);
  const { playhead, playing, speed, setSpeed, durationMs, time, view, seek } = playback;
  const { columns, hidden, shown, layout, changeColumns, setColumn, addColumn, removeColumn, toggleColumn } =
    useColumns(addError);
  const {
    client,
    index,
    current,
    runs,
    openings,
    claims,
    ablated,
    ablating,
    runError,
    failures,
    rerunning,
    progress,
    loading,
    querying,
    ...scenario
  } = useScenarioRuns({
    urlState,
    addError,
    clearErrors,
    columns,
    layout,
    load: playback.load,
    playhead: playback.playhead,
  });
  const busy = loading || progress !== null;
  const traces = useRecorded(client, addError);
  const { recorded, openFile, removeRecorded, traceRefs } = traces;
  const lessons = useLessons({
    initial: urlState,
    index,
    current,
    columns,
    changeColumns,
    jump: playback.jump,
    openEntry: scenario.openEntry,
    openRecording: traces.openSample,
  });
  const { lesson, currentLesson, currentHomework } = lessons;

  const policies = useMemo(() => current?.doc.policies ?? [], [current]);
  const stated = useMemo(() => current?.doc.claims ?? [], [current]);
  const focus = useMemo(() => (current ? scenarioFocus(current.doc) : null), [current]);
  // Edited here, or opened from a link whose scenario differs from the library's: the summary, the claims'
  // texts and the paper's values were written for the original and may no longer describe what runs.
  const modified = useMemo(() => {
    if (!current) return false;
    if (current.baseText !== null) return !sameJson(current.text, current.baseText);
    return Boolean(index && current.doc.id && findEntry(index, current.doc.id));
  }, [current, index]);
  // A column id names a policy, or that policy on a claim's ablation: "TAVS, partial boosting off".
  const labelOf = useCallback(
    (id: string) => {
      const ref = parseColumnId(id);
      if (ref?.scheduler) return `${ref.scheduler} (defaults)`;
      const base = policies.find((p) => p.id === (ref?.policy ?? id));
      const label = base?.label ?? ref?.policy ?? id;
      const off = ref?.ablation != null ? stated[ref.ablation]?.without?.label : undefined;
      return off ? `${label}, ${ablationName(off)}` : label;
    },
    [policies, stated],
  );

  // Script policies: the templates, once the first run is in (not on the cold start's path), and
  // which scripted policy the policy editor edits.
  const [templates, setTemplates] = useState<ScriptTemplate[] | null>(null);
  const anyRun = Object.keys(runs).length > 0;
  useEffect(() => {
    if (!anyRun || templates) return;
    client
      .scriptTemplates()
      .then(setTemplates)
      .catch((e: unknown) => addError(`The script templates could not be loaded: ${String(e)}`));
  }, [anyRun, templates, client, addError]);
  const [scriptPolicy, setScriptPolicy] = useState<string | null>(null);
  const scripts = useMemo(() => (current ? scriptPolicies(current.text) : []), [current]);
  // The policy edited: the one chosen, else (a link that opened the editor) the first scripted column.
  const editedScript =
    scripts.find((p) => p.id === scriptPolicy)?.id ??
    scripts.find((p) => columns.includes(p.id))?.id ??
    scripts[0]?.id ??
    null;
  const { updatePolicies } = scenario;
  /** Adds a scripted policy running a copy of `template` as a column, and opens it in the policy editor. */
  const newScript = useCallback(
    (template: Pick<ScriptTemplate, 'source' | 'vars'>, label: string, replace?: number) => {
      if (!current) return;
      const added = addScriptPolicy(current.text, template, label);
      void updatePolicies(added.text, [added.id], () => {
        const at = replace === undefined ? columns.length : replace + 1;
        changeColumns(insertColumn(columns, at, added.id, MAX_COLUMNS));
        setScriptPolicy(added.id);
        togglePanel('script', true);
      }).then((problem) => problem && addError(`The new scripted policy was not added: ${problem}`));
    },
    [current, columns, changeColumns, updatePolicies, togglePanel, addError],
  );
  /** "Edit as script" on column `i`: its own script when it runs one, else a copy of the matching template. */
  const editAsScript = useCallback(
    (i: number) => {
      const id = columns[i];
      if (!id) return;
      if (scripts.some((p) => p.id === id)) {
        setScriptPolicy(id);
        togglePanel('script', true);
        return;
      }
      const ref = parseColumnId(id);
      const scheduler = ref?.scheduler ?? current?.doc.policies.find((p) => p.id === ref?.policy)?.scheduler;
      const template = templates && templateFor(templates, scheduler);
      if (!template) {
        addError('The script templates are not loaded yet; try again in a moment.');
        return;
      }
      newScript(template, `Script from ${labelOf(id)}`, i);
    },
    [columns, scripts, current, templates, newScript, addError, labelOf, togglePanel],
  );
  const applyScript = useCallback(
    (text: string, policy: string) => updatePolicies(text, [policy]),
    [updatePolicies],
  );
  const checkScript = useCallback((source: string) => client.checkScript(source), [client]);
  const closeScript = useCallback(() => togglePanel('script', false), [togglePanel]);
  const openScript = useCallback(
    (id: string) => {
      setScriptPolicy(id);
      togglePanel('script', true);
    },
    [togglePanel],
  );
  const scriptScenario = useMemo(() => current && { text: current.text, name: current.name }, [current]);
  // A homework opens the policy editor on the student's policy.
  const homeworkPolicy = currentHomework?.policy ?? null;
  const editHomework = useCallback(() => {
    if (!homeworkPolicy) return;
    setScriptPolicy(homeworkPolicy);
    togglePanel('script', true);
  }, [homeworkPolicy, togglePanel]);
  const ready = current !== null && columns.some((c) => runs[c]);
  const firstRun = shown.map(({ policy }) => runs[policy]).find((r) => r !== undefined);

  const { toggle } = playback;
  const togglePlay = useCallback(() => {
    if (ready) toggle();
  }, [ready, toggle]);
  const stepDecision = useDecisionStep(client, firstRun, playback);
  const changeSpeed = useCallback((dir: 1 | -1) => setSpeed((v) => nextSpeed(v, dir)), [setSpeed]);
  // A key that does nothing says why, briefly.
  const [keyNotice, setKeyNotice] = useState<string | null>(null);
  useEffect(() => {
    if (!keyNotice) return;
    const timer = setTimeout(() => setKeyNotice(null), 4000);
    return () => clearTimeout(timer);
  }, [keyNotice]);
  const keyColumn = useCallback(
    (i: number) => {
      const why = whyNotToggle(hidden, i, columns.length);
      if (why) setKeyNotice(why);
      else toggleColumn(i);
    },
    [hidden, columns.length, toggleColumn],
  );
  useShortcuts({
    togglePlay,
    stepDecision,
    zoom: playback.zoom,
    changeSpeed,
    toggleColumn: keyColumn,
    stepLesson: lessons.stepBy,
    presenting,
    setPresenting,
    helpOpen,
    setHelpOpen,
  });
  // Runs (an edited script's too), claims, ablations or replays in flight: the tests' idle flag and a lesson's
  // placing wait for none.
  const inFlight = busy || querying || ablating || rerunning.length > 0;
  useTestingIdle({
    testing,
    inFlight,
    runs,
    claims: [claims, ablated],
    columns,
  });
  // Cold start: the first frame with every column on screen drawn.
  // Every column on screen has drawn: its run, or the run's opening window while the run goes on.
  const drawn = (policy: string) => runs[policy] !== undefined || openings[policy] !== undefined;
  useMarkWhenDrawn(FIRST_FRAME, current !== null && shown.length > 0 && shown.every((c) => drawn(c.policy)));
  // Back / Forward: the entry's scenario (a lesson's step when it names one); an edited or pasted scenario's
  // link is opened afresh, as a shared link is.
  const { openEntry } = scenario;
  const { goToStep, exit: exitLesson } = lessons;
  const onHistory = useCallback(
    (raw: ShareState) => {
      const link = linkWithLesson(raw);
      const ref = link.scenario;
      const entry = index && ref?.kind === 'library' && !ref.patch ? findEntry(index, ref.id) : undefined;
      if (!entry) {
        window.location.reload();
        return;
      }
      if (link.lesson && (findLesson(link.lesson) || findHomework(link.lesson))) {
        goToStep(link.lesson, link.step);
        return;
      }
      exitLesson();
      openEntry(entry, link.policies, { time: link.time, view: link.view, hidden: link.hidden });
    },
    [index, openEntry, goToStep, exitLesson],
  );
  const shareUrl = useShareUrl({
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
    presenting,
    onHistory,
    traces: traceRefs,
  });

  // Memoised: a new array would refetch every distribution on each playhead frame.
  const compared = useMemo<ComparedRun[]>(() => {
    const seen = new Set<string>();
    const sim = shown.flatMap(({ policy }) => {
      const run = runs[policy];
      if (!run || seen.has(policy)) return [];
      seen.add(policy);
      return [{ policy, label: labelOf(policy), run }];
    });
    const traces = recorded.map((c) => ({ policy: c.id, label: c.label, run: c.run, recorded: true }));
    return [...sim, ...traces];
  }, [shown, runs, labelOf, recorded]);

  // The editor's draft keeps the columns, playhead and window on screen.
  const { runDraft } = scenario;
  const submitOwn = useCallback(
    (text: string, name: string) =>
      runDraft(text, name, columns, { time: playhead.time, view: playhead.view, hidden }),
    [runDraft, columns, hidden, playhead],
  );
  const validateText = useCallback((text: string) => client.validate(text), [client]);
  const simulateLoad = useCallback(
    (text: string, name: string, cols: readonly string[]) => runDraft(text, name, cols, {}),
    [runDraft],
  );
  // Stable props: the editor (a form of the whole scenario) must not re-render on every playhead frame.
  const editorCurrent = useMemo(
    () => current && { text: current.text, name: current.name, original: current.baseText },
    [current],
  );
  const closeEditor = useCallback(() => togglePanel('editor', false), [togglePanel]);
  // The ablated run joins the columns (the last one gives way when all four are taken).
  const addAblated = useCallback(
    (k: number, policy: string) => {
      const id = columnId(policy, k);
      if (columns.includes(id)) return;
      changeColumns([...columns.slice(0, MAX_COLUMNS - 1), id]);
    },
    [columns, changeColumns],
  );

  // The columns "+ Add column" offers: the scenario's other policies, then every scheduler of the registry the
  // scenario does not use, with its default parameters.
  const addable = useMemo(
    () => [
      ...policies.map((p) => p.id).filter((p) => !columns.includes(p)),
      ...SCHEDULERS.filter((k) => !policies.some((p) => p.scheduler === k))
        .map(registryColumnId)
        .filter((c) => !columns.includes(c)),
    ],
    [policies, columns],
  );
  // A claim clicked: its policies become the columns, with its ablated run when it names one.
  const showClaim = useCallback(
    (k: number) => {
      const c = stated[k];
      if (!c) return;
      const order = policies.map((p) => p.id);
      const ids = claimPolicies(c)
        .filter((p) => order.includes(p))
        .sort((a, b) => order.indexOf(a) - order.indexOf(b));
      const subject = c.lower ?? c.higher ?? c.policy;
      const next = c.without && subject ? [...ids, columnId(subject, k)] : ids;
      if (next.length > 0) changeColumns(next.slice(0, MAX_COLUMNS));
    },
    [stated, policies, changeColumns],
  );
  const { selectScenario } = scenario;
  /** An edited scenario that ran, set aside when another was picked: its link brings it back. */
  const [keptEdit, setKeptEdit] = useState<{ readonly name: string; readonly url: string } | null>(null);
  // A new scenario starts at the top of the page, not where the library list was scrolled to. Edits that have
  // run are not dropped silently: they go into the editor's earlier drafts, and a notice offers them back.
  const pickScenario = useCallback(
    (id: string) => {
      window.scrollTo({ top: 0 });
      if (current && modified && shareUrl) {
        const ls = localStore();
        if (ls) pushHistory(ls, { text: current.text, name: current.name }, Date.now());
        setKeptEdit({ name: current.doc.title ?? current.name, url: shareUrl });
      } else setKeptEdit(null);
      selectScenario(id);
    },
    [selectScenario, current, modified, shareUrl],
  );

  /** Every column's props, a policy's run or a recorded trace: its own, and the shared playhead and simulator's. */
  const columnProps = (
    index: number,
    own: Omit<PolicyColumnProps, 'index' | 'client' | 'onSeek' | 'durationMs' | 'playhead' | 'onViewChange'>,
  ): PolicyColumnProps => ({
    ...own,
    index,
    client,
    onSeek: seek,
    durationMs,
    playhead,
    onViewChange: playback.onViewChange,
  });

  return (
    <ThemeContext.Provider value={theme}>
      <GlossaryContext.Provider value={setGlossaryAt}>
        <PresentingContext.Provider value={presenting}>
          <div
            className={`app${presenting ? ' presenting' : ''}${lessons.concealed ? ' concealed' : ''}${
              currentLesson ? ' in-lesson' : ''
            }`}
            data-testid="app"
            data-presenting={presenting}
            data-concealed={lessons.concealed || undefined}
            data-lesson-claim={lesson && currentLesson?.steps[lesson.step]?.claim}
            data-lesson-views={
              (lesson &&
                stepMarks(currentLesson?.steps[lesson.step], lessons.choice !== null)
                  ?.map((m) => m.view)
                  .join(' ')) ||
              undefined
            }
          >
            <a className="skip-link" href="#views">
              Skip to the views
            </a>
            <header className="topbar">
              <h1>schedlab</h1>
              <span className="muted tagline">hypervisor CPU scheduling, side by side</span>
              <nav className="tools" aria-label="Tools">
                {(['lessons', 'editor', 'script', 'export', 'share'] as const).map((p) => (
                  <button
                    key={p}
                    type="button"
                    data-testid={`open-${p}`}
                    aria-pressed={open.includes(p)}
                    aria-controls={open.includes(p) ? `panel-${p}` : undefined}
                    onClick={() => togglePanel(p)}
                    disabled={p !== 'lessons' && !current}
                  >
                    {
                      {
                        lessons: 'Lessons',
                        editor: 'Edit',
                        script: 'Script',
                        export: 'Export',
                        share: 'Share link',
                      }[p]
                    }
                  </button>
                ))}
                <button
                  type="button"
                  data-testid="present"
                  aria-pressed={presenting}
                  onClick={() => {
                    setPresenting((v) => !v);
                    // The keys drive the presentation: the button keeps no focus a key could press again.
                    document.getElementById('views')?.focus({ preventScroll: true });
                  }}
                  title="Presentation mode: large type, controls hidden (key P; Escape leaves)"
                >
                  {presenting ? 'Leave presentation' : 'Present'}
                </button>
                <button
                  type="button"
                  data-testid="open-help"
                  aria-pressed={helpOpen}
                  onClick={() => setHelpOpen((v) => !v)}
                  title="The keys (key ?)"
                >
                  Keys ?
                </button>
                <button
                  type="button"
                  data-testid="open-glossary"
                  aria-pressed={glossaryAt !== undefined}
                  onClick={() => setGlossaryAt(null)}
                >
                  Glossary
                </button>
                <button
                  type="button"
                  data-testid="open-about"
                  aria-pressed={aboutOpen}
                  onClick={() => setAboutOpen(true)}
                >
                  About
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
            {scenario.costAsk && <CostConfirm ask={scenario.costAsk} />}
            {helpOpen && <KeyHelp onClose={() => setHelpOpen(false)} />}
            {glossaryAt !== undefined && (
              <Glossary at={glossaryAt} onClose={() => setGlossaryAt(undefined)} />
            )}
            {aboutOpen && <About onClose={() => setAboutOpen(false)} />}
            <p className="key-notice" role="status" data-testid="key-notice" hidden={!keyNotice}>
              {keyNotice}
            </p>
            {keptEdit && (
              <p className="notice kept-edit" role="status" data-testid="kept-edit">
                Your edited “{keptEdit.name}” was kept (the editor’s earlier drafts list it too).{' '}
                <a href={keptEdit.url} data-testid="kept-edit-restore">
                  Bring it back
                </a>{' '}
                <button type="button" onClick={() => setKeptEdit(null)}>
                  Dismiss
                </button>
              </p>
            )}
            <ErrorBanner messages={errors} onDismiss={clearErrors}>
              {errors.some(isChunkLoadError) && (
                <p>
                  {STALE_BUILD_HINT}{' '}
                  <button type="button" data-testid="reload-stale" onClick={() => window.location.reload()}>
                    Reload
                  </button>
                </p>
              )}
            </ErrorBanner>
            <div className="layout">
              <aside>
                <Library
                  index={index}
                  loading={loading}
                  current={current?.id ?? null}
                  onSelect={pickScenario}
                  concealed={
                    lessons.concealed && currentLesson
                      ? new Set(currentLesson.steps.map((st) => st.scenario))
                      : undefined
                  }
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
                    missing={lessons.missing}
                    onStep={(k) => lessons.goToStep(lesson.id, k)}
                    onExit={lessons.exit}
                    labelOf={labelOf}
                    choice={lessons.choice}
                    onChoose={lessons.choose}
                    onLesson={(id) => lessons.goToStep(id, 0)}
                    settled={!inFlight}
                    stated={stated}
                    claims={claims}
                  />
                )}
                {currentHomework && (
                  <HomeworkPlayer
                    homework={currentHomework}
                    missing={lessons.missing}
                    claims={claims}
                    running={busy || rerunning.includes(currentHomework.policy)}
                    failure={failures[currentHomework.policy] ?? null}
                    labelOf={labelOf}
                    onEdit={editHomework}
                    onExit={lessons.exit}
                  />
                )}
                {open.includes('lessons') && (
                  <div id="panel-lessons">
                    <LessonPicker
                      available={(id) => Boolean(index && findEntry(index, id))}
                      onClose={() => togglePanel('lessons', false)}
                      onPick={(id) => {
                        togglePanel('lessons', false);
                        lessons.goToStep(id, 0);
                        // A homework opens the policy editor on the student's policy.
                        const hw = findHomework(id);
                        if (hw) {
                          setScriptPolicy(hw.policy);
                          togglePanel('script', true);
                        }
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
                {open.includes('script') && current && scriptScenario && (
                  <div id="panel-script">
                    {editedScript ? (
                      <Suspense fallback={<p className="muted">Loading the policy editor…</p>}>
                        <PolicyEditor
                          scenario={scriptScenario}
                          policy={editedScript}
                          templates={templates}
                          checkScript={checkScript}
                          onApply={applyScript}
                          onNew={(t) => newScript(t, `Script: ${t.title}`)}
                          onPick={setScriptPolicy}
                          failure={failures[editedScript] ?? null}
                          running={
                            rerunning.includes(editedScript) ||
                            (!runs[editedScript] && !failures[editedScript])
                          }
                          onError={addError}
                          onClose={closeScript}
                        />
                      </Suspense>
                    ) : (
                      <section
                        className="editor policy-editor"
                        data-testid="policy-editor"
                        aria-label="Policy editor"
                      >
                        <header className="editor-head">
                          <h2>Script a scheduler</h2>
                          <TemplateMenu
                            templates={templates}
                            onNew={(t) => newScript(t, `Script: ${t.title}`)}
                          />
                          <button type="button" onClick={closeScript}>
                            Close
                          </button>
                        </header>
                        <p className="muted">
                          This scenario has no scripted policy yet: start one from a template, or use “Edit as
                          script” on a column.
                        </p>
                      </section>
                    )}
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
                      onEditScript={openScript}
                    />
                  </div>
                )}
                {current ? (
                  <>
                    <section className="scenario-head">
                      <div className="scenario-title">
                        {/* A title or summary may state a predict step's answer: the id until the class has chosen. */}
                        <h2 data-testid="scenario-title">
                          {lessons.concealed
                            ? (current.id ?? current.name)
                            : (current.doc.title ?? current.name)}
                        </h2>
                        {modified && (
                          <span
                            className="badge modified-badge"
                            data-testid="modified-badge"
                            title="This scenario differs from the library's: the summary, the claims' texts and the paper's values were written for the original."
                          >
                            modified
                          </span>
                        )}
                      </div>
                      {current.doc.summary && lessons.concealed && (
                        <p className="muted" data-testid="summary-concealed">
                          The scenario’s title and summary state its results: they are shown once the class
                          has chosen.
                        </p>
                      )}
                      {current.doc.summary && !lessons.concealed && (
                        <div className={modified ? 'stale' : undefined} data-stale={modified || undefined}>
                          {modified && (
                            <div className="stale-note" data-testid="stale-note">
                              Written for the library’s original; this scenario was changed.
                            </div>
                          )}
                          <ScenarioSummary key={current.key} text={current.doc.summary} />
                        </div>
                      )}
                      {current.doc.source && <p className="muted source">Source: {current.doc.source}</p>}
                    </section>
                    {focus && (
                      <KeyFigures
                        focus={focus}
                        runs={runs}
                        stated={stated}
                        claims={claims}
                        labelOf={labelOf}
                        columns={columns}
                        stale={modified}
                      />
                    )}
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
                        <button type="button" data-testid="cancel-runs" onClick={scenario.cancelRuns}>
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
                        {columns.length < MAX_COLUMNS && addable.length > 0 && (
                          <>
                            <button
                              type="button"
                              data-testid="add-column"
                              onClick={() => addColumn(addable)}
                              disabled={!ready}
                              title={`Add a column: ${labelOf(addable[0]!)}`}
                            >
                              + Add column
                            </button>
                            <select
                              aria-label="Add a column running"
                              data-testid="add-column-select"
                              value=""
                              disabled={!ready}
                              onChange={(e) => e.target.value && addColumn([e.target.value])}
                            >
                              <option value="">or choose…</option>
                              <optgroup label="This scenario's policies">
                                {addable
                                  .filter((c) => !parseColumnId(c)?.scheduler)
                                  .map((c) => (
                                    <option key={c} value={c}>
                                      {labelOf(c)}
                                    </option>
                                  ))}
                              </optgroup>
                              <optgroup label="Other schedulers (default parameters)">
                                {addable
                                  .filter((c) => parseColumnId(c)?.scheduler)
                                  .map((c) => (
                                    <option key={c} value={c}>
                                      {labelOf(c)}
                                    </option>
                                  ))}
                              </optgroup>
                            </select>
                          </>
                        )}
                        <label
                          className="open-trace"
                          title="A perf script, perf.data or xentrace file (gzip too): shown as a recorded column. Or drop it on the page."
                        >
                          Open trace…{' '}
                          <input
                            type="file"
                            data-testid="open-trace"
                            onChange={(e) => {
                              for (const f of Array.from(e.target.files ?? [])) openFile(f);
                              e.target.value = '';
                            }}
                          />
                        </label>
                        <label title="Choose the mapping of threads to domains (and a xentrace file's TSC frequency) before the trace is shown">
                          <input
                            type="checkbox"
                            data-testid="trace-mapping-first"
                            checked={traces.mappingFirst}
                            onChange={(e) => traces.setMappingFirst(e.target.checked)}
                          />{' '}
                          mapping first
                        </label>
                        <TemplateMenu
                          templates={templates}
                          onNew={(t) => newScript(t, `Script: ${t.title}`)}
                        />
                        <span className="muted keys">
                          Keys: Space play · ←/→ previous/next decision · +/− zoom · [/] speed
                          {columns.length > 2 ? ' · 1-4 show/hide columns' : ''}
                        </span>
                      </div>
                      <div
                        className="columns"
                        style={{
                          gridTemplateColumns: `repeat(${shown.length + recorded.length}, minmax(0, 1fr))`,
                        }}
                      >
                        {shown.map(({ policy, i }) => (
                          <PolicyColumn
                            key={i}
                            {...columnProps(i, {
                              policy,
                              label: labelOf(policy),
                              ablated: ablated[policy],
                              policies,
                              run: runs[policy],
                              opening: openings[policy],
                              failed: runs[policy]
                                ? null
                                : (failures[policy] ?? ablated[policy]?.error ?? runError),
                              scripted: scripts.some((p) => p.id === policy),
                              rerunning: rerunning.includes(policy),
                              onEditScript: () => editAsScript(i),
                              onRemove: columns.length > 1 ? () => removeColumn(i) : undefined,
                              onPolicyChange: (p) => setColumn(i, p),
                            })}
                          />
                        ))}
                        {recorded.map((c, k) => (
                          <PolicyColumn
                            key={c.id}
                            {...columnProps(shown.length + k, {
                              policy: c.id,
                              label: c.label,
                              recorded: true,
                              policies: [],
                              run: c.run,
                              failed: null,
                              onRemove: () => removeRecorded(c.id),
                              onPolicyChange: () => {},
                            })}
                          />
                        ))}
                      </div>
                      <RecordedPanel
                        client={client}
                        recorded={recorded}
                        staged={traces.staged}
                        onShow={traces.show}
                        onCancel={removeRecorded}
                        onReopen={traces.reopen}
                        onSimulate={simulateLoad}
                      />
                      <ComparisonPanel client={client} runs={compared} />
                      <ClaimsPanel
                        claims={claims}
                        stated={stated}
                        failed={runError}
                        labelOf={labelOf}
                        ablated={ablated}
                        columns={columns}
                        onAblate={addAblated}
                        onShow={showClaim}
                        stale={modified}
                      />
                    </ErrorBoundary>
                  </>
                ) : (
                  <p className="muted placeholder">
                    {busy ? 'Loading…' : 'Pick a scenario from the library.'}
                  </p>
                )}
              </main>
            </div>
          </div>
        </PresentingContext.Provider>
      </GlossaryContext.Provider>
    </ThemeContext.Provider>
  );
}
