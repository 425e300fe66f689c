// The script editor's text area: CodeMirror 6 with line numbers, Rhai highlighted as Rust (its syntax is close:
// `fn`, `let`, `#{ }` maps, `//` comments) and the script's error marked at its line through the lint gutter.
// Loaded on demand (React.lazy in PolicyEditor): CodeMirror stays out of the page's first download.
import { useEffect, useRef } from 'react';
import { EditorState, type Extension } from '@codemirror/state';
import {
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  StreamLanguage,
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { rust } from '@codemirror/legacy-modes/mode/rust';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { offsetOf, type ScriptProblem } from '../lib/script';

interface Props {
  readonly value: string;
  readonly onChange: (value: string) => void;
  /** The error to mark (a syntax error as typed, or the last run's runtime error); null: none. */
  readonly problem: ScriptProblem | null;
  readonly label: string;
}

/** The problem as a CodeMirror diagnostic over its line (from its column when named). */
export function diagnostics(doc: string, problem: ScriptProblem | null): Diagnostic[] {
  if (!problem || problem.line === null) return [];
  const from = offsetOf(doc, problem.line, problem.column);
  const eol = doc.indexOf('\n', from);
  const to = Math.max(from, eol < 0 ? doc.length : eol);
  return [{ from, to, severity: 'error', message: problem.message }];
}

const theme = EditorView.theme({
  '&': { fontSize: '13px', border: '1px solid var(--line)', borderRadius: '4px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, monospace', minHeight: '16em', maxHeight: '32em' },
  '.cm-gutters': { background: 'var(--panel)', color: 'var(--muted)' },
});

export default function CodeEditor({ value, onChange, problem, label }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  useEffect(() => {
    onChangeRef.current = onChange;
  }, [onChange]);

  useEffect(() => {
    if (!host.current) return;
    const extensions: Extension[] = [
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightActiveLine(),
      history(),
      indentOnInput(),
      bracketMatching(),
      StreamLanguage.define(rust),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      lintGutter(),
      keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
      EditorView.contentAttributes.of({ 'aria-label': label }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) onChangeRef.current(u.state.doc.toString());
      }),
      theme,
    ];
    const v = new EditorView({ state: EditorState.create({ doc: value, extensions }), parent: host.current });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The view is made once; `value` changes from outside are applied below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // A new text from outside (another template, another policy): replace the document.
  useEffect(() => {
    const v = view.current;
    if (!v || v.state.doc.toString() === value) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  // The marker follows the problem (it refers to the text it was found in; a stale one is cleared by the caller).
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    v.dispatch(setDiagnostics(v.state, diagnostics(v.state.doc.toString(), problem)));
  }, [problem]);

  return <div className="code-editor" ref={host} data-testid="script-code" />;
}
