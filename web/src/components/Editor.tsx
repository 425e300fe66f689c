// The scenario editor: form controls generated from scenarios/schema.json beside the JSON, both
// validated by the simulator itself with each error at its field. Valid changes re-run the simulation. The
// draft lives in localStorage under this tab's key and is never dropped without the user asking:
// edits that were not run when another scenario came on screen go into a history of the last ten drafts, shared
// with the site's other tabs (they see each other's through storage events), with a button to bring each back;
// a save that fails (the storage quota) says so and offers the draft as a file. Typing stays responsive on a large
// scenario: the form follows the text at low priority (a keystroke's own render skips it), long lists render only
// what is in view, storage is written once typing pauses, and so is the JSON view after a form edit (a textarea
// of hundreds of kB takes a second or more to lay out again); a large scenario's JSON view starts folded.
import {
  memo,
  useCallback,
  useDeferredValue,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ChangeEvent,
} from 'react';
import {
  SCENARIO_SCHEMA,
  childPath,
  editJsonText,
  parseProblems,
  sameJson,
  type Problem,
} from '../lib/editorSchema';
import { download, slug } from '../lib/exports';
import type { Json } from '../lib/share';
import { EditScriptContext, SchemaField, type Key } from './SchemaFields';
import {
  DRAFT_PREFIX,
  HISTORY_KEY,
  pushHistory,
  readDraft,
  readHistory,
  type Draft,
  type SavedDraft,
} from '../lib/drafts';
import { localStore, useTabDraft } from '../app/useTabDraft';

/** Largest scenario file we read [bytes]: scenarios are small; anything bigger is a mistake. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Quiet time after the last keystroke before a valid draft re-runs [ms]. */
const RERUN_DELAY_MS = 700;
/** Quiet time after the last form edit before the JSON view shows it [ms]. */
const VIEW_DELAY_MS = 400;
/** Text above which a scenario that comes on screen folds the JSON view [chars]: laying it out takes seconds. */
export const LARGE_TEXT = 100_000;

type Stored = Draft;

/** When a draft was set aside, in words. */
function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

function parse(text: string): { doc: Json | null; error: string | null } {
  try {
    return { doc: JSON.parse(text) as Json, error: null };
  } catch (e) {
    return { doc: null, error: `Not valid JSON: ${(e as Error).message}` };
  }
}

interface Props {
  /** The scenario on screen and its name, and the library's text it was made from (null for one of yours). */
  readonly current: {
    readonly text: string;
    readonly name: string;
    readonly original?: string | null;
  } | null;
  /** The simulator's validation: null when valid, else its message naming the field paths. */
  readonly validate: (text: string) => Promise<string | null>;
  /** Runs the draft (the page validates again and reports into the banner). */
  readonly onRun: (text: string, name: string) => void;
  readonly onError: (message: string) => void;
  readonly onClose: () => void;
  /** Opens the policy editor on the scripted policy `id` (a script policy's source field offers it). */
  readonly onEditScript?: (id: string) => void;
}

/** No problems: one array, so the memoised form sees no change. */
const NONE: readonly Problem[] = [];

/**
 * The form, re-rendered only when its document, the problems or the handler change: a keystroke renders the
 * editor at once, and the form later at low priority (its document is a deferred value).
 */
const FormView = memo(function FormView({
  doc,
  problems,
  onChange,
}: {
  doc: Json | null;
  problems: readonly Problem[];
  onChange: (keys: readonly Key[], value: Json | undefined) => void;
}) {
  return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (
    <SchemaField
      schema={SCENARIO_SCHEMA}
      value={doc}
      path=""
      keys={[]}
      label="scenario"
      problems={problems}
      onChange={onChange}
    />
  ) : (
    <p className="muted">Fix the JSON to use the form.</p>
  );
});

/** "1\n2\n..." for each line of `text`. */
export function lineNumbers(text: string): string {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return Array.from({ length: n }, (_, i) => String(i + 1)).join('\n');
}

/** Memoised: the page re-renders on every playhead frame; the editor only when its inputs change. */
export const Editor = memo(function Editor({
  current,
  validate,
  onRun,
  onError,
  onClose,
  onEditScript,
}: Props) {
  const { key, store, saveError, setSaveError } = useTabDraft();
  /** The JSON view is shown (a large scenario's starts folded; the user's choice otherwise stays). */
  const [showJson, setShowJson] = useState(true);
  const [draft, setDraftState] = useState<Stored | null>(() => {
    const ls = localStore();
    // A draft from the editor before per-tab keys is this tab's once.
    return ls && (readDraft(ls, key) ?? readDraft(ls, DRAFT_PREFIX));
  });
  const [history, setHistory] = useState<SavedDraft[]>(() => {
    const ls = localStore();
    return ls ? readHistory(ls) : [];
  });
  /** The draft this tab set aside last, while its notice shows. */
  const [kept, setKept] = useState<SavedDraft | null>(null);

  /** Puts a draft with unrun edits into the history and shows it as kept aside. */
  const setAside = useCallback(
    (d: Stored) => {
      const ls = localStore();
      if (!ls) return;
      const r = pushHistory(ls, d, Date.now());
      setHistory(r.history);
      setKept(r.history[0] ?? null);
      if (r.error) setSaveError(`Your edits to ${d.name} could not be saved: ${r.error}.`);
    },
    [setSaveError],
  );

  // Another tab set a draft aside: its history is ours too.
  useEffect(() => {
    const onStorage = (e: StorageEvent) => {
      const ls = localStore();
      if (ls && (e.key === HISTORY_KEY || e.key === null)) setHistory(readHistory(ls));
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);
  /** The simulator's verdict on a draft text (shown until the next verdict arrives). */
  const [verdict, setVerdict] = useState<{ text: string; problems: Problem[] } | null>(null);
  const [autoRun, setAutoRun] = useState(true);
  const gutterRef = useRef<HTMLPreElement>(null);
  /** The draft came back from storage and differs from the scenario on screen. */
  const [restored, setRestored] = useState(false);
  const seen = useRef<string | null>(null);

  /**
   * Undo and redo over the user's own changes, form edits and typing alike (Ctrl+Z, Ctrl+Shift+Z): the
   * textarea's own history cannot hold the form's edits, which set its value. Typing within a second of the
   * last keystroke is one step.
   */
  const undo = useRef<{ past: string[]; future: string[]; typingAt: number }>({
    past: [],
    future: [],
    typingAt: -Infinity,
  });
  const [undoDepth, setUndoDepth] = useState({ past: 0, future: 0 });
  const textRef = useRef<string>('');
  const syncUndo = useCallback(
    () => setUndoDepth({ past: undo.current.past.length, future: undo.current.future.length }),
    [],
  );

  // The user's own change: a restored draft becomes live again (it re-runs when valid).
  const setDraft = useCallback(
    (next: Stored | null, typing = false) => {
      const h = undo.current;
      const now = performance.now();
      const prev = textRef.current;
      if (next && next.text !== prev && !(typing && now - h.typingAt < 1000)) {
        h.past.push(prev);
        if (h.past.length > 200) h.past.shift();
      }
      h.typingAt = typing ? now : -Infinity;
      if (next && next.text !== prev) h.future = [];
      syncUndo();
      setRestored(false);
      setDraftState(next);
      store(next, typing);
    },
    [store, syncUndo],
  );
  /** A scenario coming into the editor from elsewhere (on screen, a file, a draft): a large one folds the JSON. */
  const arrive = useCallback((t: string) => {
    if (t.length > LARGE_TEXT) setShowJson(false);
  }, []);

  // A new scenario on screen: the editor follows it, unless the draft holds edits that were never run.
  useEffect(() => {
    if (!current) return;
    const prev = seen.current;
    seen.current = current.text;
    if (prev === current.text) return;
    const d = draft;
    const next = { text: current.text, name: current.name };
    if (d === null || sameJson(d.text, current.text) || (prev !== null && sameJson(d.text, prev))) {
      // Another scenario (not the draft's own run): its edits start a history of their own.
      if (d === null || !sameJson(d.text, current.text)) {
        undo.current = { past: [], future: [], typingAt: -Infinity };
        syncUndo();
      }
      arrive(next.text);
      setDraftState(next);
      store(next);
    } else if (prev === null) {
      // First scenario after a reload: the stored draft wins and says so.
      setRestored(true);
    } else {
      // Unrun edits: keep them aside rather than dropping them.
      setAside(d);
      arrive(next.text);
      setDraftState(next);
      store(next);
    }
    // Only a new scenario on screen moves the draft; the draft's own changes must not re-enter here.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current]);

  const text = draft?.text ?? current?.text ?? '';
  const name = draft?.name ?? current?.name ?? 'your scenario';
  useLayoutEffect(() => {
    textRef.current = text;
  }, [text]);
  /** What the JSON view shows: the text itself while typing there, the form's edits once they pause. */
  const [viewText, setViewText] = useState(text);
  useEffect(() => {
    if (viewText === text) return;
    const timer = setTimeout(() => setViewText(text), VIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, viewText]);
  // The form (hundreds of fields for a large scenario) follows the text at low priority, so a keystroke in the
  // JSON view never waits for it.
  const formText = useDeferredValue(text);
  const { doc, error: jsonError } = useMemo(() => parse(text), [text]);
  const { doc: formDoc } = useMemo(() => parse(formText), [formText]);
  const onScreen = current !== null && sameJson(text, current.text);
  const problems = jsonError || text.trim() === '' ? NONE : (verdict?.problems ?? NONE);
  const checking = !jsonError && text.trim() !== '' && verdict?.text !== text;

  // Validate every change (the simulator is the validator), then re-run when valid and different.
  useEffect(() => {
    if (jsonError || text.trim() === '') return;
    let live = true;
    const timer = setTimeout(() => {
      validate(text)
        .then((msg) => {
          if (!live) return;
          setVerdict({ text, problems: msg === null ? [] : parseProblems(msg) });
          // A draft restored after a reload waits for the user: a shared link's scenario must not be
          // replaced by an old draft just because the editor is open.
          if (msg === null && autoRun && !onScreen && !restored) {
            onRun(text, name);
          }
        })
        .catch((e: unknown) => live && onError(`The simulator could not check the draft: ${String(e)}`));
    }, RERUN_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text, name, jsonError, autoRun, onScreen, restored, validate, onRun, onError]);

  // The form's handler keeps one identity while the text changes, so the memoised form is not re-rendered by each
  // keystroke; it edits the latest document.
  const latest = useRef({ doc, name, text });
  useLayoutEffect(() => {
    latest.current = { doc, name, text };
  }, [doc, name, text]);
  /** The form path of what a form edit added (an item, a field), to bring into view once the form shows it. */
  const [added, setAdded] = useState<string | null>(null);
  const edit = useCallback(
    (keys: readonly Key[], value: Json | undefined) => {
      const { doc: d, name: n, text: t } = latest.current;
      if (d === null) return;
      let before: Json | undefined = d;
      for (const k of keys)
        before =
          before !== null && typeof before === 'object'
            ? (before as Record<string | number, Json | undefined>)[k]
            : undefined;
      if (before === undefined && value !== undefined) setAdded(keys.reduce<string>(childPath, ''));
      // Only the lines the edit touches change in the JSON view.
      setDraft({ text: editJsonText(t, keys, value), name: n });
    },
    [setDraft],
  );
  // What was added comes into view, focused, once the form has drawn it (a long list draws its last items only
  // when scrolled there).
  const formRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (added === null) return;
    let tries = 0;
    let frame = 0;
    const find = () => {
      const form = formRef.current;
      const el = form?.querySelector<HTMLElement>(
        `[data-path="${CSS.escape(added)}"], [data-path^="${CSS.escape(added)}."], [data-path^="${CSS.escape(added)}["]`,
      );
      if (el) {
        el.scrollIntoView({ block: 'center' });
        el.focus({ preventScroll: true });
        setAdded(null);
        return;
      }
      if (form && tries === 2) form.scrollTop = form.scrollHeight;
      if (++tries < 30) frame = requestAnimationFrame(find);
      else setAdded(null);
    };
    frame = requestAnimationFrame(find);
    return () => cancelAnimationFrame(frame);
  }, [added, formDoc]);

  /** Steps back (-1) or forward (1) through the user's own changes. */
  const stepUndo = useCallback(
    (dir: -1 | 1) => {
      const h = undo.current;
      const from = dir < 0 ? h.past : h.future;
      const to = dir < 0 ? h.future : h.past;
      const t = from.pop();
      if (t === undefined) return;
      to.push(textRef.current);
      h.typingAt = -Infinity;
      syncUndo();
      setRestored(false);
      const next = { text: t, name: latest.current.name };
      setDraftState(next);
      setViewText(t);
      store(next);
    },
    [store, syncUndo],
  );
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
    const k = e.key.toLowerCase();
    if (k !== 'z' && k !== 'y') return;
    e.preventDefault();
    stepUndo(k === 'y' || e.shiftKey ? 1 : -1);
  };

  /** The form's "Open in the policy editor" on policy `k` of the draft. */
  const editScript = useCallback(
    (k: number) => {
      const d = latest.current.doc;
      const policies = d && typeof d === 'object' && !Array.isArray(d) ? d.policies : null;
      const p = Array.isArray(policies) ? policies[k] : null;
      const id = p && typeof p === 'object' && !Array.isArray(p) ? p.id : null;
      if (typeof id === 'string') onEditScript?.(id);
    },
    [onEditScript],
  );

  const onFile = async (e: ChangeEvent<HTMLInputElement>) => {
    const input = e.currentTarget;
    const file = input.files?.[0];
    input.value = ''; // choosing the same file again should load it again
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      onError(`${file.name}: ${Math.round(file.size / 1024)} KiB is too large for a scenario file.`);
      return;
    }
    try {
      const t = await file.text();
      if (draft && current && !sameJson(draft.text, current.text)) setAside(draft);
      arrive(t);
      setDraft({ text: t, name: file.name });
      onRun(t, file.name);
    } catch (err) {
      onError(`${file.name}: cannot be read (${err instanceof Error ? err.message : String(err)}).`);
    }
  };

  const exportFile = () => {
    const id =
      doc && typeof doc === 'object' && !Array.isArray(doc) && typeof doc.id === 'string' ? doc.id : name;
    download(`${slug(id)}.json`, text, 'application/json');
  };

  /** Brings a draft back from the history; unrun edits in the editor go into the history first. */
  const restore = (d: SavedDraft) => {
    const unrun = draft && !(current && sameJson(draft.text, current.text)) && draft.text !== d.text;
    if (unrun) setAside(draft);
    else setKept(null);
    arrive(d.text);
    setDraft({ text: d.text, name: d.name });
  };

  const rootProblems = problems.filter((p) => p.path === '(scenario)');

  return (
    <section className="editor" data-testid="editor" aria-label="Scenario editor" onKeyDown={onKeyDown}>
      <header className="editor-head">
        <h2>Edit: {name}</h2>
        <span className="muted" role="status" data-testid="editor-status">
          {jsonError
            ? 'The JSON has a syntax error.'
            : checking
              ? 'Checking…'
              : problems.length > 0
                ? `${problems.length} problem${problems.length === 1 ? '' : 's'}; the last valid version stays on screen.`
                : onScreen
                  ? 'Valid; on screen.'
                  : 'Valid.'}
        </span>
        <label className="inline">
          <input type="checkbox" checked={autoRun} onChange={(e) => setAutoRun(e.target.checked)} /> Re-run on
          change
        </label>
        <button
          type="button"
          data-testid="run-pasted"
          disabled={text.trim() === ''}
          onClick={() => onRun(text, name)}
        >
          Run
        </button>
        <button
          type="button"
          data-testid="export-scenario"
          onClick={exportFile}
          disabled={text.trim() === ''}
        >
          Export file
        </button>
        <label className="file button-like">
          Import file
          <input type="file" accept=".json,application/json" data-testid="scenario-file" onChange={onFile} />
        </label>
        <button
          type="button"
          data-testid="editor-undo"
          disabled={undoDepth.past === 0}
          onClick={() => stepUndo(-1)}
          title="Undo the last change, in the form or the JSON (Ctrl+Z)"
        >
          Undo
        </button>
        <button
          type="button"
          data-testid="editor-redo"
          disabled={undoDepth.future === 0}
          onClick={() => stepUndo(1)}
          title="Redo (Ctrl+Shift+Z)"
        >
          Redo
        </button>
        <button
          type="button"
          data-testid="editor-revert"
          disabled={!current || (onScreen && (!current.original || sameJson(text, current.original)))}
          onClick={() => {
            if (!current) return;
            // Unrun edits go back to the scenario on screen; edits that have run, to the library's original.
            const back = !onScreen || !current.original ? current.text : current.original;
            setDraft({ text: back, name: current.name });
          }}
          title={
            onScreen
              ? 'Go back to the library’s version of this scenario (it runs again)'
              : 'Replace the draft with the scenario on screen'
          }
        >
          Revert
        </button>
        <button type="button" onClick={onClose} aria-label="Close the editor">
          Close
        </button>
      </header>
      {restored && !onScreen && (
        <p className="notice" data-testid="editor-restored">
          Your edits from before the reload were kept; they differ from the scenario on screen. Press Run to
          run them, or Revert to edit the scenario on screen instead.
        </p>
      )}
      {saveError && (
        <p className="notice" role="alert" data-testid="draft-save-failed">
          {saveError.endsWith('.') ? saveError : `Your draft could not be saved: ${saveError}.`} It is still
          here in the page; export it so a reload cannot lose it.{' '}
          <button type="button" onClick={exportFile}>
            Export file
          </button>
        </p>
      )}
      {kept && (
        <p className="notice" data-testid="editor-kept">
          Edits to {kept.name} that were never run were kept aside (in Earlier drafts).{' '}
          <button type="button" data-testid="restore-kept" onClick={() => restore(kept)}>
            Bring them back
          </button>{' '}
          <button type="button" onClick={() => setKept(null)}>
            Dismiss
          </button>
        </p>
      )}
      {history.length > 0 && (
        <details className="draft-history" data-testid="draft-history">
          <summary>Earlier drafts ({history.length})</summary>
          <ol>
            {history.map((d) => (
              <li key={`${d.savedAt}-${d.text.length}`} data-testid="draft-entry">
                <span>{d.title}</span> <span className="muted">{when(d.savedAt)}</span>{' '}
                <button type="button" data-testid="restore-draft" onClick={() => restore(d)}>
                  Open
                </button>
              </li>
            ))}
          </ol>
        </details>
      )}
      <div className="editor-body">
        <div className="editor-form" data-testid="editor-form" data-scroll-root="" ref={formRef}>
          <EditScriptContext.Provider value={onEditScript ? editScript : null}>
            <FormView doc={formDoc} problems={problems} onChange={edit} />
          </EditScriptContext.Provider>
        </div>
        <div className="editor-json">
          {showJson && (
            <label htmlFor="scenario-json-text">
              JSON (checked against scenarios/schema.json){' '}
              <button type="button" data-testid="toggle-json" onClick={() => setShowJson(false)}>
                Hide
              </button>
            </label>
          )}
          {!showJson && (
            <p className="muted">
              The JSON view ({Math.round(text.length / 1024)} kB) is folded: a text this long takes seconds to
              lay out again after each edit in the form.{' '}
              <button type="button" data-testid="toggle-json" onClick={() => setShowJson(true)}>
                Show the JSON
              </button>
            </p>
          )}
          <div className="json-box" hidden={!showJson}>
            {/* Line numbers: the errors cite line and column. Scrolled with the text, hidden from readers. */}
            <pre className="line-numbers" aria-hidden="true" ref={gutterRef} data-testid="json-line-numbers">
              {showJson ? lineNumbers(viewText) : ''}
            </pre>
            <textarea
              id="scenario-json-text"
              data-testid="scenario-json"
              spellCheck={false}
              wrap="off"
              aria-invalid={jsonError !== null || problems.length > 0}
              aria-describedby="scenario-json-errors"
              placeholder='Paste a scenario file here: {"schema": 1, ...}'
              value={showJson ? viewText : ''}
              // A form edit the view has not shown yet is shown before the user types here.
              onFocus={() => setViewText(text)}
              onScroll={(e) => {
                if (gutterRef.current) gutterRef.current.scrollTop = e.currentTarget.scrollTop;
              }}
              onChange={(e) => {
                setViewText(e.target.value);
                setDraft({ text: e.target.value, name: draft?.name ?? 'Pasted scenario' }, true);
              }}
            />
          </div>
          <ul className="field-errors" id="scenario-json-errors" data-testid="editor-errors">
            {jsonError && <li>{jsonError}</li>}
            {problems.map((p, i) => (
              <li key={i}>
                <code>{p.path}</code>: {p.message}
              </li>
            ))}
          </ul>
          {rootProblems.length > 0 && (
            <p className="muted">Problems at (scenario) concern the file as a whole.</p>
          )}
        </div>
      </div>
    </section>
  );
});
