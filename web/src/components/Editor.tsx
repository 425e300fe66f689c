// The scenario editor (issue 9): form controls generated from scenarios/schema.json beside the JSON, both
// validated by the simulator itself with each error at its field. Valid changes re-run the simulation. The
// draft lives in localStorage and is never dropped without the user asking: edits that were not run when
// another scenario came on screen are kept aside with a button to bring them back.
import { memo, useCallback, useEffect, useMemo, useRef, useState, type ChangeEvent } from 'react';
import { SCENARIO_SCHEMA, parseProblems, sameJson, setIn, type Problem } from '../lib/editorSchema';
import { download, slug } from '../lib/exports';
import type { Json } from '../lib/share';
import { SchemaField, type Key } from './SchemaFields';

/** Largest scenario file we read [bytes]: scenarios are small; anything bigger is a mistake. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const DRAFT_KEY = 'schedlab.draft';
const KEPT_KEY = 'schedlab.draft.kept';
/** Quiet time after the last keystroke before a valid draft re-runs [ms]. */
const RERUN_DELAY_MS = 700;

interface Stored {
  readonly text: string;
  readonly name: string;
}

function load(key: string): Stored | null {
  try {
    const raw = localStorage.getItem(key);
    if (raw === null) return null;
    // The first loader stored the bare text; keep reading it.
    if (!raw.startsWith('{"text"')) return { text: raw, name: 'your draft' };
    const v = JSON.parse(raw) as Stored;
    return typeof v.text === 'string' ? { text: v.text, name: String(v.name ?? 'your draft') } : null;
  } catch {
    return null;
  }
}

function store(key: string, value: Stored | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the draft still lives in the page.
  }
}

function parse(text: string): { doc: Json | null; error: string | null } {
  try {
    return { doc: JSON.parse(text) as Json, error: null };
  } catch (e) {
    return { doc: null, error: `Not valid JSON: ${(e as Error).message}` };
  }
}

interface Props {
  /** The scenario on screen and its name. */
  readonly current: { readonly text: string; readonly name: string } | null;
  /** The simulator's validation: null when valid, else its message naming the field paths. */
  readonly validate: (text: string) => Promise<string | null>;
  /** Runs the draft (the page validates again and reports into the banner). */
  readonly onRun: (text: string, name: string) => void;
  readonly onError: (message: string) => void;
  readonly onClose: () => void;
}

/** "1\n2\n..." for each line of `text`. */
export function lineNumbers(text: string): string {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return Array.from({ length: n }, (_, i) => String(i + 1)).join('\n');
}

/** Memoised: the page re-renders on every playhead frame; the editor only when its inputs change. */
export const Editor = memo(function Editor({ current, validate, onRun, onError, onClose }: Props) {
  const [draft, setDraftState] = useState<Stored | null>(() => load(DRAFT_KEY));
  const [kept, setKept] = useState<Stored | null>(() => load(KEPT_KEY));
  /** The simulator's verdict on a draft text (shown until the next verdict arrives). */
  const [verdict, setVerdict] = useState<{ text: string; problems: Problem[] } | null>(null);
  const [autoRun, setAutoRun] = useState(true);
  const gutterRef = useRef<HTMLPreElement>(null);
  /** The draft came back from storage and differs from the scenario on screen. */
  const [restored, setRestored] = useState(false);
  const seen = useRef<string | null>(null);

  // The user's own change: a restored draft becomes live again (it re-runs when valid).
  const setDraft = useCallback((next: Stored | null) => {
    setRestored(false);
    setDraftState(next);
    store(DRAFT_KEY, next);
  }, []);

  // A new scenario on screen: the editor follows it, unless the draft holds edits that were never run.
  useEffect(() => {
    if (!current) return;
    const prev = seen.current;
    seen.current = current.text;
    if (prev === current.text) return;
    setDraftState((d) => {
      if (d === null || sameJson(d.text, current.text)) {
        const next = { text: current.text, name: current.name };
        store(DRAFT_KEY, next);
        return next;
      }
      if (prev === null) {
        // First scenario after a reload: the stored draft wins and says so.
        setRestored(true);
        return d;
      }
      if (sameJson(d.text, prev)) {
        const next = { text: current.text, name: current.name };
        store(DRAFT_KEY, next);
        return next;
      }
      // Unrun edits: keep them aside rather than dropping them.
      setKept(d);
      store(KEPT_KEY, d);
      const next = { text: current.text, name: current.name };
      store(DRAFT_KEY, next);
      return next;
    });
  }, [current]);

  const text = draft?.text ?? current?.text ?? '';
  const name = draft?.name ?? current?.name ?? 'your scenario';
  const { doc, error: jsonError } = useMemo(() => parse(text), [text]);
  const onScreen = current !== null && sameJson(text, current.text);
  const problems = jsonError || text.trim() === '' ? [] : (verdict?.problems ?? []);
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

  const edit = useCallback(
    (keys: readonly Key[], value: Json | undefined) => {
      if (doc === null) return;
      setDraft({ text: JSON.stringify(setIn(doc, keys, value), null, 2) + '\n', name });
    },
    [doc, name, setDraft],
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
      if (draft && current && !sameJson(draft.text, current.text)) {
        setKept(draft);
        store(KEPT_KEY, draft);
      }
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

  const restoreKept = () => {
    if (!kept) return;
    if (draft && !(current && sameJson(draft.text, current.text))) {
      // Swap, so restoring is never a loss either.
      setKept(draft);
      store(KEPT_KEY, draft);
    } else {
      setKept(null);
      store(KEPT_KEY, null);
    }
    setDraft(kept);
  };

  const rootProblems = problems.filter((p) => p.path === '(scenario)');

  return (
    <section className="editor" data-testid="editor" aria-label="Scenario editor">
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
          disabled={!current || onScreen}
          onClick={() => current && setDraft({ text: current.text, name: current.name })}
          title="Replace the draft with the scenario on screen"
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
      {kept && (
        <p className="notice" data-testid="editor-kept">
          Edits to {kept.name} that were never run were kept aside.{' '}
          <button type="button" data-testid="restore-kept" onClick={restoreKept}>
            Bring them back
          </button>{' '}
          <button
            type="button"
            onClick={() => {
              setKept(null);
              store(KEPT_KEY, null);
            }}
          >
            Discard them
          </button>
        </p>
      )}
      <div className="editor-body">
        <div className="editor-form" data-testid="editor-form">
          {doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (
            <SchemaField
              schema={SCENARIO_SCHEMA}
              value={doc}
              path=""
              keys={[]}
              label="scenario"
              problems={problems}
              onChange={edit}
            />
          ) : (
            <p className="muted">Fix the JSON to use the form.</p>
          )}
        </div>
        <div className="editor-json">
          <label htmlFor="scenario-json-text">JSON (checked against scenarios/schema.json)</label>
          <div className="json-box">
            {/* Line numbers: the errors cite line and column. Scrolled with the text, hidden from readers. */}
            <pre className="line-numbers" aria-hidden="true" ref={gutterRef} data-testid="json-line-numbers">
              {lineNumbers(text)}
            </pre>
            <textarea
              id="scenario-json-text"
              data-testid="scenario-json"
              spellCheck={false}
              wrap="off"
              aria-invalid={jsonError !== null || problems.length > 0}
              aria-describedby="scenario-json-errors"
              placeholder='Paste a scenario file here: {"schema": 1, ...}'
              value={text}
              onScroll={(e) => {
                if (gutterRef.current) gutterRef.current.scrollTop = e.currentTarget.scrollTop;
              }}
              onChange={(e) => setDraft({ text: e.target.value, name: draft?.name ?? 'Pasted scenario' })}
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
