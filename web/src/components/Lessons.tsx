// Classroom lessons (issue 9): a picker and the player bar. The player shows the step's text, points at the
// step's views (outlined on screen, listed here for screen readers) and moves through the steps; the page
// (App) loads scenarios and moves the playhead.
import { useEffect } from 'react';
import { LESSONS, type Lesson } from '../lib/lessons';

interface PickerProps {
  readonly onPick: (id: string) => void;
  readonly onClose: () => void;
  /** Library ids, to say which lessons cannot run in this build. */
  readonly available: (scenario: string) => boolean;
}

export function LessonPicker({ onPick, onClose, available }: PickerProps) {
  return (
    <section className="lesson-picker" data-testid="lesson-picker" aria-label="Lessons">
      <h2>Lessons</h2>
      <p className="muted">
        Each paper’s story in steps. Keys: PageDown / PageUp for the next / previous step.
      </p>
      <ul>
        {LESSONS.map((l) => {
          const missing = l.steps.some((s) => !available(s.scenario));
          return (
            <li key={l.id}>
              <button
                type="button"
                data-testid="lesson-start"
                data-lesson={l.id}
                onClick={() => onPick(l.id)}
              >
                Paper {l.paper}: {l.title}
              </button>{' '}
              <span className="muted">
                {l.summary}
                {missing ? ' (its scenario is not in this build yet)' : ''}
              </span>
            </li>
          );
        })}
      </ul>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

const MARK_CLASS = 'lesson-mark';

/** Outlines the step's views on screen; re-applied as views mount (runs arrive after the step starts). */
function useMarks(lesson: Lesson, step: number): void {
  const marks = lesson.steps[step]?.marks;
  useEffect(() => {
    const apply = () => {
      const want = new Set<Element>();
      for (const m of marks ?? []) {
        const scope = m.policy
          ? [
              ...document.querySelectorAll(
                `[data-testid="policy-column"][data-policy="${CSS.escape(m.policy)}"]`,
              ),
            ]
          : [document];
        for (const s of scope) {
          const el = s.querySelector(`[data-testid="${CSS.escape(m.view)}"]`);
          if (!el) continue;
          want.add(el);
          el.classList.add(MARK_CLASS);
          el.setAttribute('data-lesson-note', m.note);
          break; // one mark per entry: the first column with that policy, or the first view on the page
        }
      }
      for (const el of document.querySelectorAll(`.${MARK_CLASS}`)) {
        if (want.has(el)) continue;
        el.classList.remove(MARK_CLASS);
        el.removeAttribute('data-lesson-note');
      }
    };
    apply();
    const timer = setInterval(apply, 400);
    return () => {
      clearInterval(timer);
      for (const el of document.querySelectorAll(`.${MARK_CLASS}`)) {
        el.classList.remove(MARK_CLASS);
        el.removeAttribute('data-lesson-note');
      }
    };
  }, [marks]);
}

interface PlayerProps {
  readonly lesson: Lesson;
  readonly step: number;
  /** Why the step's scenario cannot be shown, if it cannot. */
  readonly missing: string | null;
  readonly onStep: (step: number) => void;
  readonly onExit: () => void;
}

export function LessonPlayer({ lesson, step, missing, onStep, onExit }: PlayerProps) {
  useMarks(lesson, step);
  const s = lesson.steps[step];
  const last = lesson.steps.length - 1;
  if (!s) return null;
  return (
    <section
      className="lesson"
      data-testid="lesson"
      data-lesson={lesson.id}
      data-step={step + 1}
      aria-label="Lesson"
    >
      <div className="lesson-head">
        <span className="muted">
          Paper {lesson.paper} · {lesson.title} · step {step + 1} of {lesson.steps.length}
        </span>
        <button type="button" data-testid="lesson-exit" className="lesson-exit" onClick={onExit}>
          End lesson
        </button>
      </div>
      <h2 data-testid="lesson-title">{s.title}</h2>
      <p data-testid="lesson-text" aria-live="polite">
        {s.text}
      </p>
      {missing && (
        <p className="notice" role="alert" data-testid="lesson-missing">
          {missing}
        </p>
      )}
      {s.marks && s.marks.length > 0 && (
        <ul className="lesson-marks" aria-label="Look at">
          {s.marks.map((m, i) => (
            <li key={i}>
              <strong>{m.view.replace(/-/g, ' ')}</strong>
              {m.policy ? ` (${m.policy})` : ''}: {m.note}
            </li>
          ))}
        </ul>
      )}
      <div className="lesson-nav">
        <button
          type="button"
          data-testid="lesson-prev"
          disabled={step === 0}
          onClick={() => onStep(step - 1)}
        >
          ← Previous
        </button>
        <button
          type="button"
          data-testid="lesson-next"
          disabled={step === last}
          onClick={() => onStep(step + 1)}
        >
          Next →
        </button>
      </div>
    </section>
  );
}
