import { useId, useState } from 'react';

/** Summaries longer than this many characters start folded to a few lines. */
const FOLD_CHARS = 320;

/**
 * A scenario's summary. Paper scenarios explain their mechanism and measured figures at length; folded to three
 * lines they leave the run on the first screen, and the whole text stays in the page (search, screen readers).
 */
export function ScenarioSummary({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const long = text.length > FOLD_CHARS;
  return (
    <>
      <p id={id} className={long && !open ? 'folded' : undefined}>
        {text}
      </p>
      {long && (
        <button
          type="button"
          className="fold-toggle"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? 'Show less' : 'Show the whole summary'}
        </button>
      )}
    </>
  );
}
