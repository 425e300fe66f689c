import { useState, type ChangeEvent } from 'react';

/** Largest scenario file we read [bytes]: scenarios are small; anything bigger is a mistake. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const DRAFT_KEY = 'schedlab.draft';

function loadDraft(): string {
  try {
    return localStorage.getItem(DRAFT_KEY) ?? '';
  } catch {
    return '';
  }
}

function saveDraft(text: string): void {
  try {
    localStorage.setItem(DRAFT_KEY, text);
  } catch {
    // Storage full or disabled: the draft still lives in the textarea.
  }
}

interface Props {
  /** The scenario on screen, so it can be copied in and edited. */
  readonly currentText: string | null;
  /** Validates and runs; the draft is kept whatever the outcome. */
  readonly onSubmit: (text: string, name: string) => void;
  readonly onError: (message: string) => void;
}

/** Run your own scenario: open a file or paste JSON. The draft survives errors and reloads. */
export function ScenarioLoader({ currentText, onSubmit, onError }: Props) {
  const [draft, setDraftState] = useState(loadDraft);
  const setDraft = (text: string) => {
    setDraftState(text);
    saveDraft(text);
  };

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
      const text = await file.text();
      setDraft(text);
      onSubmit(text, file.name);
    } catch (err) {
      onError(`${file.name}: cannot be read (${err instanceof Error ? err.message : String(err)}).`);
    }
  };

  return (
    <section className="loader" aria-label="Load a scenario">
      <h2>Your scenario</h2>
      <label className="file">
        Open a file{' '}
        <input type="file" accept=".json,application/json" data-testid="scenario-file" onChange={onFile} />
      </label>
      <textarea
        data-testid="scenario-json"
        aria-label="Scenario JSON"
        placeholder='Paste a scenario file here: {"schema": 1, ...}'
        spellCheck={false}
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
      />
      <div className="row">
        <button
          type="button"
          data-testid="run-pasted"
          disabled={draft.trim() === ''}
          onClick={() => onSubmit(draft, 'Pasted scenario')}
        >
          Run this scenario
        </button>
        <button
          type="button"
          disabled={!currentText}
          onClick={() => currentText && setDraft(currentText)}
          title="Copy the scenario on screen here to edit it"
        >
          Edit current
        </button>
      </div>
    </section>
  );
}
