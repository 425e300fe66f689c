// Guided lessons: which lesson and step is on screen, and moving between steps. A step on the scenario already
// shown only moves the playhead (and the columns); a step on another scenario loads it.
import { useCallback, useState } from 'react';
import {
  concealedAt,
  findHomework,
  findLesson,
  PENDING_SCENARIOS,
  type Homework,
  type Lesson,
} from '../lib/lessons';
import { findEntry, type ScenarioEntry, type ScenarioIndex } from '../lib/scenarios';
import type { View } from '../lib/view';
import type { Current, Restore } from './useScenarioRuns';

export interface LessonAt {
  readonly id: string;
  readonly step: number;
}

export interface LessonsDeps {
  /** The share link's lesson and step. */
  readonly initial: { readonly lesson: string | null; readonly step: number };
  readonly index: ScenarioIndex | null;
  readonly current: Current | null;
  readonly columns: readonly string[];
  readonly changeColumns: (next: readonly string[]) => void;
  /** Stops playback and moves the playhead (and the window when given) on the scenario shown. */
  readonly jump: (t: number, view?: View | null) => void;
  readonly openEntry: (entry: ScenarioEntry, preferred: readonly string[] | null, restore?: Restore) => void;
  /** Opens a recording shipped with the page beside the columns (a step's `recording`). */
  readonly openRecording: (id: string) => void;
}

export interface Lessons {
  readonly lesson: LessonAt | null;
  /** The lesson itself, when one is on. */
  readonly currentLesson: Lesson | undefined;
  /** The homework, when one is on (its id is `lesson.id`, at step 0). */
  readonly currentHomework: Homework | undefined;
  /** Why the step's views show the previous scenario (its scenario is not in this build), if so. */
  readonly missing: string | null;
  readonly goToStep: (id: string, step: number) => void;
  /** The previous (-1) or next (1) step, when the lesson has one; null without a lesson. */
  readonly stepBy: ((delta: 1 | -1) => void) | null;
  readonly exit: () => void;
  /** The class's pick on a predict step, once made (null before: the results stay hidden). */
  readonly choice: string | null;
  readonly choose: (policy: string) => void;
  /** A predict step (this one or a later one on the same scenario) waits for the class's pick: the page hides
   * the results. */
  readonly concealed: boolean;
}

export function useLessons({
  initial,
  index,
  current,
  columns,
  changeColumns,
  jump,
  openEntry,
  openRecording,
}: LessonsDeps): Lessons {
  const [lesson, setLesson] = useState<LessonAt | null>(() =>
    initial.lesson && (findLesson(initial.lesson) || findHomework(initial.lesson))
      ? { id: initial.lesson, step: findHomework(initial.lesson) ? 0 : initial.step }
      : null,
  );
  const [missing, setMissing] = useState<string | null>(null);
  /** Picks on predict steps, by `lesson:step`. */
  const [choices, setChoices] = useState<Readonly<Record<string, string>>>({});

  /** Shows a lesson step: loads its scenario when another is on screen, else only moves the playhead. */
  const goToStep = useCallback(
    (id: string, step: number) => {
      const hw = findHomework(id);
      if (hw) {
        setLesson({ id, step: 0 });
        const entry = index && findEntry(index, hw.scenario);
        if (!entry) {
          setMissing(
            `This homework uses the scenario "${hw.scenario}", which is not in this build's library.`,
          );
          return;
        }
        setMissing(null);
        const cols = [hw.policy, hw.against];
        // The homework's scenario already on screen keeps the student's code (an edited scenario included).
        if (current?.id === entry.id) {
          if (cols.join() !== columns.join()) changeColumns(cols);
          return;
        }
        openEntry(entry, cols);
        return;
      }
      const l = findLesson(id);
      const s = l?.steps[step];
      if (!l || !s) return;
      setLesson({ id, step });
      const entry = index && findEntry(index, s.scenario);
      if (!entry) {
        setMissing(
          `This step uses the scenario "${s.scenario}", which is not in this build's library` +
            (PENDING_SCENARIOS.includes(s.scenario) ? ' yet (it is still being written).' : '.') +
            ' The text above still tells the story; the views show the previous scenario.',
        );
        return;
      }
      setMissing(null);
      if (s.recording) openRecording(s.recording);
      const sameScenario = current?.id === entry.id && current.text === current.baseText;
      if (sameScenario) {
        if (s.policies && s.policies.join() !== columns.join()) changeColumns([...s.policies]);
        jump(s.t_ms, s.view_ms ?? null);
        return;
      }
      openEntry(entry, s.policies ?? null, { time: s.t_ms, view: s.view_ms ?? null });
    },
    [index, current, columns, changeColumns, jump, openEntry, openRecording],
  );

  const currentLesson = lesson ? findLesson(lesson.id) : undefined;
  const currentHomework = lesson ? findHomework(lesson.id) : undefined;
  const stepBy = useCallback(
    (delta: 1 | -1) => {
      if (!lesson || !currentLesson) return;
      const next = lesson.step + delta;
      if (next >= 0 && next < currentLesson.steps.length) goToStep(lesson.id, next);
    },
    [lesson, currentLesson, goToStep],
  );

  const exit = useCallback(() => {
    setLesson(null);
    setMissing(null);
  }, []);

  const key = lesson ? `${lesson.id}:${lesson.step}` : '';
  const choice = choices[key] ?? null;
  const choose = useCallback((policy: string) => setChoices((c) => ({ ...c, [key]: policy })), [key]);
  const concealed = Boolean(
    lesson &&
    currentLesson &&
    concealedAt(currentLesson, lesson.step, (j) => choices[`${lesson.id}:${j}`] !== undefined),
  );

  return {
    lesson,
    currentLesson,
    currentHomework,
    missing,
    goToStep,
    stepBy: lesson && currentLesson ? stepBy : null,
    exit,
    choice,
    choose,
    concealed,
  };
}
