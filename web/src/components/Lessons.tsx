// Classroom lessons: a picker and the player bar. The player shows the step's text, points at the
// step's views (outlined on screen, listed here for screen readers) and moves through the steps; the page
// (App) loads scenarios and moves the playhead.
import { useContext, useEffect, useRef } from 'react';
import { PresentingContext } from '../lib/theme';
import { Terms } from './Reference';
import {
  DIFFERENCE_MARGIN,
  HOMEWORK,
  lessonSource,
  LESSONS,
  nextLesson,
  predictVerdict,
  renderLessonText,
  stepMarks,
  type Homework,
  type Lesson,
} from '../lib/lessons';
import type { ClaimResult, ScenarioClaim } from '../sim/types';
import { claimValueLines, fmt } from '../lib/format';
import { metricLabel } from '../lib/focus';
import { viewSelector } from './views';

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
                {lessonSource(l)}: {l.title}
              </button>{' '}
              <span className="muted">
                {l.summary}
                {missing ? ' (its scenario is not in this build yet)' : ''}
              </span>
            </li>
          );
        })}
      </ul>
      <h3>Homework</h3>
      <p className="muted">
        Write a scheduler in the page for which the claims hold; the link carries your code.
      </p>
      <ul>
        {HOMEWORK.map((h) => (
          <li key={h.id}>
            <button
              type="button"
              data-testid="homework-start"
              data-lesson={h.id}
              onClick={() => onPick(h.id)}
            >
              Paper {h.paper}: {h.title}
            </button>{' '}
            <span className="muted">
              {h.summary}
              {available(h.scenario) ? '' : ' (its scenario is not in this build yet)'}
            </span>
          </li>
        ))}
      </ul>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

interface HomeworkProps {
  readonly homework: Homework;
  /** Why its scenario cannot be shown, if it cannot. */
  readonly missing: string | null;
  /** The scenario's claims as judged (null while its runs are in flight). */
  readonly claims: readonly ClaimResult[] | null;
  /** The student's policy is running again after an edit. */
  readonly running: boolean;
  /** Why the student's last run failed, if it did. */
  readonly failure: string | null;
  readonly labelOf: (policy: string) => string;
  /** Opens the policy editor on the student's policy. */
  readonly onEdit: () => void;
  readonly onExit: () => void;
}

/** Homework: the goal, and each goal claim holding or failing on the student's latest run, with its values. */
export function HomeworkPlayer({
  homework,
  missing,
  claims,
  running,
  failure,
  labelOf,
  onEdit,
  onExit,
}: HomeworkProps) {
  const goal = homework.claims.map((k) => claims?.[k]);
  const judged = !running && claims !== null;
  const met = judged && goal.every((c) => c?.holds === true);
  return (
    <section
      className="lesson homework"
      data-testid="homework"
      data-lesson={homework.id}
      data-met={judged ? String(met) : undefined}
      aria-label="Homework"
    >
      <div className="lesson-head">
        <span className="muted">
          Paper {homework.paper} · homework · your policy beside {labelOf(homework.against)}
        </span>
        <button type="button" data-testid="homework-exit" className="lesson-exit" onClick={onExit}>
          End homework
        </button>
      </div>
      <h2 data-testid="lesson-title">{homework.title}</h2>
      <p data-testid="homework-goal">{homework.goal}</p>
      <p className="muted">Hint: {homework.hint}</p>
      {missing && (
        <p className="notice" role="alert" data-testid="lesson-missing">
          {missing}
        </p>
      )}
      <ul className="homework-claims" aria-live="polite">
        {homework.claims.map((k, i) => {
          const c = goal[i];
          const state = !judged || !c ? 'pending' : c.holds ? 'holds' : 'fails';
          return (
            <li
              key={k}
              className={state}
              data-testid="homework-claim"
              data-holds={state === 'pending' ? undefined : String(c!.holds)}
            >
              <span className="verdict" aria-label={state}>
                {state === 'pending' ? '…' : c!.holds ? '✓' : '✗'}
              </span>{' '}
              {c?.text ?? `claim ${k}`}
              {judged && c && (
                <span className="claim-values">
                  {c.error ? c.error : claimValueLines(c.values).join(' · ')}
                </span>
              )}
            </li>
          );
        })}
      </ul>
      <p data-testid="homework-status" role="status">
        {failure
          ? `Your policy's run stopped: ${failure}`
          : !judged
            ? 'Running your policy…'
            : met
              ? 'Goal met: every claim holds. Share the link to hand it in.'
              : 'Not yet: edit your policy; the claims are judged again after each run.'}
      </p>
      <button type="button" data-testid="homework-edit" onClick={onEdit}>
        Edit your policy
      </button>
    </section>
  );
}

const MARK_CLASS = 'lesson-mark';
const FIRST_CLASS = 'lesson-mark-first';
/** The furthest the page can scroll down [px]. */
function maxScroll(): number {
  return document.documentElement.scrollHeight - window.innerHeight;
}

/** Keys that scroll the page: the reader pressing one takes over from the lesson's placing of its view. */
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

/**
 * Outlines the step's views on screen; re-applied as views mount (runs arrive after the step starts). The page is
 * scrolled to the lesson once it has `settled` (runs, claims and replays done): scrolled earlier, content still
 * arriving would move the views after the scroll, by an amount that depends on which answer came first (a
 * lesson screenshot differed by 38 px between runs).
 */
function useMarks(lesson: Lesson, step: number, settled: boolean, revealed: boolean): void {
  const marks = stepMarks(lesson.steps[step], revealed);
  const settledRef = useRef(settled);
  const presenting = useContext(PresentingContext);
  const presentingRef = useRef(presenting);
  const placeRef = useRef<() => void>(() => {});
  useEffect(() => {
    presentingRef.current = presenting;
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
          // A column view by its registered id (components/views.tsx); other parts of the page by test id.
          const el = s.querySelector(viewSelector(m.view) ?? `[data-testid="${CSS.escape(m.view)}"]`);
          if (!el) continue;
          want.add(el);
          el.classList.add(MARK_CLASS);
          // The styles key on the attribute: a view's own render rewrites its className, not this attribute.
          el.setAttribute('data-lesson-note', m.note);
          break; // one mark per entry: the first column with that policy, or the first view on the page
        }
      }
      for (const el of document.querySelectorAll(`.${MARK_CLASS}, [data-lesson-note]`)) {
        if (want.has(el)) continue;
        el.classList.remove(MARK_CLASS);
        el.removeAttribute('data-lesson-note');
      }
      // The step's first view is the one it is about: presentation mode moves it up (styles.css).
      const first = [...want][0];
      for (const el of document.querySelectorAll(`.${FIRST_CLASS}, [data-lesson-first]`))
        if (el !== first) {
          el.classList.remove(FIRST_CLASS);
          el.removeAttribute('data-lesson-first');
        }
      first?.classList.add(FIRST_CLASS);
      first?.setAttribute('data-lesson-first', '');
    };
    apply();
    // The step is shown the same way whatever the order its answers arrived in: once the page has settled, the
    // lesson's text at the top of the window and the step's views below it (the first is placed right under the
    // text in presentation mode, styles.css), kept there as late content moves them, until the reader scrolls or
    // acts. (Scrolling only when the view was out of sight made the position depend on where the page was.)
    let tookOver = false;
    const place = () => {
      const lesson = document.querySelector('[data-testid="lesson"]');
      if (tookOver || !lesson || !document.querySelector('[data-lesson-first]') || !settledRef.current)
        return;
      const y = window.scrollY;
      const lessonRect = lesson.getBoundingClientRect();
      // Where the lesson sits in the page (its box on screen is where it sticks while scrolled, styles.css).
      const parent = lesson.parentElement?.getBoundingClientRect();
      let top = presentingRef.current && parent ? parent.top + y : lessonRect.top + y;
      // On the projector the lesson's text stays at the top of the screen (styles.css): scroll on until the
      // step's views are all below it, as long as the first one keeps its top in sight.
      if (presentingRef.current) {
        const rects = [...document.querySelectorAll('[data-lesson-note]')].map((e) =>
          e.getBoundingClientRect(),
        );
        if (rects.length > 0) {
          const first = Math.min(...rects.map((r) => r.top)) + y;
          const last = Math.max(...rects.map((r) => r.bottom)) + y;
          const under = lessonRect.height + 8;
          top = Math.max(top, Math.min(first - under, last - window.innerHeight + 8));
        }
      }
      const target = Math.max(0, Math.min(top, maxScroll()));
      if (Math.abs(target - y) >= 1) window.scrollTo({ top: target });
    };
    placeRef.current = place;
    place();
    const timer = setInterval(() => {
      apply();
      place();
    }, 400);
    const stop = (e: Event) => {
      // Keys other than scrolling ones (a step's own keys re-run this effect anyway) leave the view placed.
      if (e instanceof KeyboardEvent && !SCROLL_KEYS.has(e.key)) return;
      tookOver = true;
    };
    const took = ['wheel', 'touchmove', 'pointerdown', 'keydown'] as const;
    for (const t of took) window.addEventListener(t, stop, { passive: true });
    return () => {
      clearInterval(timer);
      for (const t of took) window.removeEventListener(t, stop);
      for (const el of document.querySelectorAll(`.${MARK_CLASS}, [data-lesson-note], [data-lesson-first]`)) {
        el.classList.remove(MARK_CLASS, FIRST_CLASS);
        el.removeAttribute('data-lesson-note');
        el.removeAttribute('data-lesson-first');
      }
    };
  }, [marks, revealed, presenting]); // a predict step's choice reveals results above the view: show it again
  // Settling places the view at once, in the same commit, rather than at the next tick.
  useEffect(() => {
    settledRef.current = settled;
    presentingRef.current = presenting;
    if (settled) placeRef.current();
  }, [settled, presenting]);
}

interface PlayerProps {
  readonly lesson: Lesson;
  readonly step: number;
  /** Why the step's scenario cannot be shown, if it cannot. */
  readonly missing: string | null;
  readonly onStep: (step: number) => void;
  readonly onExit: () => void;
  /** Policy labels for a predict step's choices. */
  readonly labelOf: (policy: string) => string;
  /** The class's pick on this predict step, or null before it. */
  readonly choice: string | null;
  readonly onChoose: (policy: string) => void;
  /** Starts another lesson (the next one, from the last step). */
  readonly onLesson: (id: string) => void;
  /** Nothing in flight (runs, claims, ablations, replays): the layout is final, so the step's view can be shown. */
  readonly settled: boolean;
  /** The scenario's claims as stated, and as judged on the runs on screen (null while in flight). */
  readonly stated: readonly ScenarioClaim[];
  readonly claims: readonly ClaimResult[] | null;
}

/** What the reveal says: the winner the run shows by its claim's figures, or that they are about the same. */
function Reveal({
  step,
  choice,
  stated,
  claims,
  labelOf,
}: {
  step: Lesson['steps'][number];
  choice: string;
  stated: readonly ScenarioClaim[];
  claims: readonly ClaimResult[] | null;
  labelOf: (policy: string) => string;
}) {
  const k = step.claim;
  const claim = k === undefined ? undefined : stated[k];
  const verdict = claim && claims && k !== undefined ? predictVerdict(claim, claims[k]?.values) : null;
  if (!verdict)
    return (
      <p data-testid="lesson-reveal" aria-live="polite">
        Your pick: {labelOf(choice)}. {claims ? 'This run has no figures for it.' : 'Judging the runs…'}
      </p>
    );
  const figures = verdict.figures
    .map((f) => `${fmt(f.value, 3)} under ${labelOf(f.policy)}`)
    .join(' against ');
  const what = metricLabel(verdict.path);
  return (
    <p data-testid="lesson-reveal" data-winner={verdict.winner ?? 'same'} aria-live="polite">
      {verdict.winner === null
        ? `About the same here: ${what} ${figures}, less than ${DIFFERENCE_MARGIN * 100}% apart. `
        : `${choice === verdict.winner ? '✓ Right: ' : '✗ Not this time: '}${labelOf(verdict.winner)} wins ` +
          `here: ${what} ${figures}. `}
      The key figures and the claims are shown again.
    </p>
  );
}

export function LessonPlayer({
  lesson,
  step,
  missing,
  onStep,
  onExit,
  labelOf,
  choice,
  onChoose,
  onLesson,
  settled,
  stated,
  claims,
}: PlayerProps) {
  useMarks(lesson, step, settled, choice !== null);
  const s = lesson.steps[step];
  const shownMarks = stepMarks(s, choice !== null);
  const last = lesson.steps.length - 1;
  const next = nextLesson(lesson.id);
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
          {lessonSource(lesson)} · {lesson.title} · step {step + 1} of {lesson.steps.length}
        </span>
        <button type="button" data-testid="lesson-exit" className="lesson-exit" onClick={onExit}>
          End lesson
        </button>
      </div>
      <h2 data-testid="lesson-title">{s.title}</h2>
      <p data-testid="lesson-text" aria-live="polite">
        <Terms key={`${lesson.id}:${step}`} text={renderLessonText(s.text, claims)} />
      </p>
      {s.predict && (
        <div className="lesson-predict" data-testid="lesson-predict" data-revealed={choice !== null}>
          <p>
            <strong>{s.predict.question}</strong>{' '}
            {choice === null && <span className="muted">The results stay hidden until you choose.</span>}
          </p>
          <div role="group" aria-label="Your prediction">
            {s.predict.options.map((o) => (
              <button
                key={o}
                type="button"
                data-testid="lesson-choice"
                data-policy={o}
                aria-pressed={choice === o}
                disabled={choice !== null}
                onClick={() => onChoose(o)}
              >
                {labelOf(o)}
              </button>
            ))}
          </div>
          {choice !== null && (
            <Reveal step={s} choice={choice} stated={stated} claims={claims} labelOf={labelOf} />
          )}
        </div>
      )}
      {missing && (
        <p className="notice" role="alert" data-testid="lesson-missing">
          {missing}
        </p>
      )}
      {shownMarks && shownMarks.length > 0 && (
        <ul className="lesson-marks" aria-label="Look at">
          {shownMarks.map((m, i) => (
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
        <span className="muted lesson-keys">
          Step {step + 1} of {lesson.steps.length} · PageDown / PageUp · ? for all keys
        </span>
        {step === last && next && (
          <button
            type="button"
            data-testid="lesson-next-lesson"
            onClick={() => onLesson(next.id)}
            title={`Next lesson: ${next.title}`}
          >
            Next lesson<span className="lesson-next-name">: {next.title}</span> →
          </button>
        )}
      </div>
    </section>
  );
}
