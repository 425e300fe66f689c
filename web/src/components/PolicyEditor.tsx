// The policy editor: a scripted policy's Rhai source in CodeMirror (loaded on demand) and its
// vars, checked by the simulator as you type (a syntax error is marked at its line) and run in its column once
// typing pauses; a run that fails marks the line its message names. The source edited is the scenario's: every
// applied edit is a scenario edit, so the share link and the editor's draft history carry it. What has not been
// applied yet (a script that does not compile) is written to this tab's scenario draft, so a reload keeps it.
import { lazy, memo, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Json } from '../lib/share';
import { pushHistory, readDraft } from '../lib/drafts';
import { localStore, useTabDraft } from '../app/useTabDraft';
import { TemplateMenu } from './TemplateMenu';
import { Markdown } from './Markdown';
import scriptApi from '../../../docs/script-api.md?raw';
import {
  scriptPolicies,
  scriptProblem,
  setScript,
  varValue,
  type ScriptPolicy,
  type ScriptProblem,
  type ScriptTemplate,
} from '../lib/script';

const CodeEditor = lazy(() => import('./CodeEditor'));

/** Quiet time after the last keystroke before the source is checked [ms]. */
const CHECK_DELAY_MS = 200;
/** Quiet time after the last keystroke before a compiling source re-runs its column [ms]. */
export const APPLY_DELAY_MS = 600;

interface Props {
  /** The scenario on screen (its text holds the scripts) and its name. */
  readonly scenario: { readonly text: string; readonly name: string };
  /** The scripted policy edited. */
  readonly policy: string;
  readonly templates: readonly ScriptTemplate[] | null;
  readonly checkScript: (source: string) => Promise<ScriptProblem | null>;
  /**
   * Runs the scenario `text` (policy `policy` changed) in that column; resolves with the simulator's message
   * when the scenario does not validate, else null.
   */
  readonly onApply: (text: string, policy: string) => Promise<string | null>;
  /** Adds a new scripted column from a template. */
  readonly onNew: (template: ScriptTemplate) => void;
  /** Edits another scripted policy. */
  readonly onPick: (policy: string) => void;
  /** Why this policy's last run failed (a runtime error naming its line), if it did. */
  readonly failure: string | null;
  /** Its column is re-running. */
  readonly running: boolean;
  readonly onError: (message: string) => void;
  readonly onClose: () => void;
}

const PolicyEditor = memo(function PolicyEditor({
  scenario,
  policy,
  templates,
  checkScript,
  onApply,
  onNew,
  onPick,
  failure,
  running,
  onError,
  onClose,
}: Props) {
  const scripts = useMemo(() => scriptPolicies(scenario.text), [scenario.text]);
  const applied: ScriptPolicy | undefined = scripts.find((p) => p.id === policy);
  const [source, setSource] = useState(applied?.source ?? '');
  const [vars, setVars] = useState<Readonly<Record<string, Json>>>(applied?.vars ?? {});
  /** The simulator's word on `source`: its syntax error, or null when it compiles. */
  const [checked, setChecked] = useState<{ source: string; problem: ScriptProblem | null } | null>(null);
  /** The scenario validation's message for the last applied edit, if it failed. */
  const [invalid, setInvalid] = useState<string | null>(null);
  const { key, store, saveError } = useTabDraft();
  /**
   * This policy's script in the tab's draft when it differs from the one on screen: edits not applied before a
   * reload (a script that did not compile yet), offered back.
   */
  const [kept] = useState(() => {
    const ls = localStore();
    const d = ls && readDraft(ls, key);
    const mine = d ? scriptPolicies(d.text).find((p) => p.id === policy) : undefined;
    return mine && applied && mine.source !== applied.source ? mine : null;
  });
  const [keptShown, setKeptShown] = useState(kept !== null);

  // Another policy, or its source changed from outside (the scenario editor, a draft restored): follow it.
  const seen = useRef<{ policy: string; source: string; vars: string } | null>(null);
  useEffect(() => {
    if (!applied) return;
    const next = { policy, source: applied.source, vars: JSON.stringify(applied.vars) };
    const prev = seen.current;
    seen.current = next;
    if (prev && prev.policy === next.policy && prev.source === next.source && prev.vars === next.vars) return;
    // Unapplied edits of the policy left behind go into the draft history rather than away.
    if (prev && prev.policy !== next.policy && source !== prev.source) {
      const ls = localStore();
      if (ls)
        pushHistory(
          ls,
          { text: setScript(scenario.text, prev.policy, source), name: scenario.name },
          Date.now(),
        );
    }
    setSource(applied.source);
    setVars(applied.vars);
    setInvalid(null);
    // Only a new policy or an outside change moves the editor; its own edits must not re-enter here.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [policy, applied?.source, applied?.vars]);

  const dirty =
    applied !== undefined &&
    (source !== applied.source || JSON.stringify(vars) !== JSON.stringify(applied.vars));

  // Check as you type; run once typing pauses and the script compiles.
  useEffect(() => {
    if (!applied) return;
    let live = true;
    let check: Promise<ScriptProblem | null> | null = null;
    const t1 = setTimeout(() => {
      check = checkScript(source);
      check
        .then((problem) => live && setChecked({ source, problem }))
        .catch((e: unknown) => live && onError(`The simulator could not check the script: ${String(e)}`));
    }, CHECK_DELAY_MS);
    const t2 = setTimeout(() => {
      if (!dirty || !check) return;
      void check.then(async (problem) => {
        if (!live || problem !== null) return;
        const text = setScript(scenario.text, policy, source, vars);
        const msg = await onApply(text, policy);
        if (live) setInvalid(msg);
      });
    }, APPLY_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(t1);
      clearTimeout(t2);
    };
    // The scenario text changes when an edit is applied; that alone must not apply again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source, vars, policy, dirty]);

  // Unapplied edits survive a reload: this tab's scenario draft holds them (the scenario editor restores it).
  useEffect(() => {
    if (dirty) store({ text: setScript(scenario.text, policy, source, vars), name: scenario.name }, true);
  }, [dirty, source, vars, scenario, policy, store]);
  useEffect(() => {
    if (saveError) onError(`Your script could not be saved in the browser: ${saveError}.`);
  }, [saveError, onError]);

  const syntax = checked?.source === source ? checked.problem : null;
  // A run's error concerns the applied source: marked while the editor still shows that source.
  const runtime = !dirty && failure ? scriptProblem(failure) : null;
  const problem = syntax ?? runtime;
  const status = !applied
    ? `This scenario has no scripted policy "${policy}".`
    : syntax
      ? 'Syntax error: the column keeps its last run.'
      : checked?.source !== source
        ? 'Checking…'
        : invalid
          ? `Not run: ${invalid}`
          : running || dirty
            ? 'Running…'
            : runtime
              ? 'The run stopped with an error.'
              : 'Compiles; on screen.';

  const onCode = useCallback((v: string) => setSource(v), []);

  return (
    <section className="editor policy-editor" data-testid="policy-editor" aria-label="Policy editor">
      <header className="editor-head">
        <h2>Script: {applied?.label ?? policy}</h2>
        <span
          className="muted"
          role="status"
          data-testid="script-status"
          data-state={syntax ? 'syntax' : runtime ? 'runtime' : dirty || running ? 'running' : 'ok'}
        >
          {status}
        </span>
        {scripts.length > 1 && (
          <select
            aria-label="Scripted policy to edit"
            data-testid="script-policy-select"
            value={policy}
            onChange={(e) => onPick(e.target.value)}
          >
            {scripts.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        )}
        <TemplateMenu templates={templates} onNew={onNew} />
        <button type="button" onClick={onClose} aria-label="Close the policy editor">
          Close
        </button>
      </header>
      {keptShown && kept && kept.id === policy && (
        <p className="notice" data-testid="script-kept">
          Your edits to this script from before the reload were not applied (they may not compile yet).{' '}
          <button
            type="button"
            data-testid="script-restore"
            onClick={() => {
              setSource(kept.source);
              setVars(kept.vars);
              setKeptShown(false);
            }}
          >
            Bring them back
          </button>{' '}
          <button type="button" onClick={() => setKeptShown(false)}>
            Dismiss
          </button>
        </p>
      )}
      <p className="muted">
        Rhai, with the hooks a script policy may define (<code>do_schedule</code> is required; the API
        reference below lists them all). Checked as you type; the column re-runs when typing pauses.
      </p>
      <details className="script-api" data-testid="script-api">
        <summary>API reference: hooks, arguments, the return map, host functions, limits</summary>
        {/* The repository's docs/script-api.md, generated from the tables the engine checks scripts with. */}
        <Markdown text={scriptApi} />
      </details>
      <div className="policy-editor-body">
        <Suspense fallback={<p className="muted">Loading the editor…</p>}>
          <CodeEditor value={source} onChange={onCode} problem={problem} label={`Script of ${policy}`} />
        </Suspense>
        <div className="script-side">
          <ul className="field-errors" data-testid="script-errors">
            {problem && (
              <li
                data-testid="script-error"
                data-line={problem.line ?? undefined}
                data-kind={syntax ? 'syntax' : 'runtime'}
              >
                {problem.line !== null && <strong>Line {problem.line}: </strong>}
                {problem.message}
              </li>
            )}
            {!problem && failure && !dirty && <li data-testid="script-error">{failure}</li>}
          </ul>
          <fieldset className="script-vars" data-testid="script-vars">
            <legend>vars</legend>
            {Object.keys(vars).length === 0 && <p className="muted">This script reads no vars.</p>}
            {Object.entries(vars).map(([name, value]) => (
              <label key={name} className="inline">
                <code>{name}</code>{' '}
                {typeof value === 'boolean' ? (
                  <input
                    type="checkbox"
                    data-testid="script-var"
                    data-var={name}
                    checked={value}
                    onChange={(e) => setVars((v) => ({ ...v, [name]: e.target.checked }))}
                  />
                ) : (
                  <input
                    type={typeof value === 'number' ? 'number' : 'text'}
                    data-testid="script-var"
                    data-var={name}
                    defaultValue={typeof value === 'object' ? JSON.stringify(value) : String(value)}
                    key={`${policy}:${JSON.stringify(applied?.vars[name])}`}
                    onChange={(e) => setVars((v) => ({ ...v, [name]: varValue(value, e.target.value) }))}
                  />
                )}
              </label>
            ))}
            <VarsJson vars={vars} onChange={setVars} />
          </fieldset>
        </div>
      </div>
    </section>
  );
});

/** The whole vars map as JSON, where vars are added or removed; applied once it parses to an object. */
function VarsJson({
  vars,
  onChange,
}: {
  vars: Readonly<Record<string, Json>>;
  onChange: (vars: Readonly<Record<string, Json>>) => void;
}) {
  const shown = JSON.stringify(vars);
  const [text, setText] = useState(shown);
  const [last, setLast] = useState(shown);
  const [bad, setBad] = useState(false);
  if (shown !== last) {
    setLast(shown);
    setText(shown);
    setBad(false);
  }
  return (
    <label className="inline vars-json">
      all vars, as JSON{' '}
      <input
        type="text"
        data-testid="script-vars-json"
        spellCheck={false}
        value={text}
        aria-invalid={bad}
        onChange={(e) => {
          setText(e.target.value);
          try {
            const v = JSON.parse(e.target.value) as Json;
            const ok = v !== null && typeof v === 'object' && !Array.isArray(v);
            setBad(!ok);
            if (ok) {
              setLast(JSON.stringify(v));
              onChange(v);
            }
          } catch {
            setBad(true);
          }
        }}
      />
    </label>
  );
}

export default PolicyEditor;
