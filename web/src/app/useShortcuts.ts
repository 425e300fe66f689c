// The page's keys: Space play/pause, arrows step through decisions, +/- zoom, [/] speed, 1-4 show/hide columns;
// for the classroom, PageDown/PageUp step through a lesson (what presentation clickers send), P toggles
// presentation mode and Escape leaves it, ? shows them all (KEYS, the help overlay's list). A key does what KEYS
// says whatever has focus (Space on a focused button plays, it does not press the button), except while typing
// in a field or choosing in a list, and the slider keeps its arrows.
import { useEffect, type Dispatch, type SetStateAction } from 'react';

/** The keys and what they do, as the help overlay lists them. */
export const KEYS: readonly { readonly keys: string; readonly does: string }[] = [
  { keys: 'Space', does: 'play / pause' },
  { keys: '← / →', does: 'previous / next scheduling decision' },
  { keys: '+ / −', does: 'zoom the timelines in / out' },
  { keys: '[ / ]', does: 'slower / faster' },
  { keys: '1 – 4', does: 'show / hide column 1-4 (with more than two columns)' },
  { keys: 'PageDown / PageUp', does: 'next / previous lesson step (a presentation clicker sends these)' },
  { keys: 'P', does: 'presentation mode on / off' },
  { keys: 'Escape', does: 'close this help; leave presentation mode' },
  { keys: '?', does: 'this help' },
];

/** Whether a key press belongs to the focused control (typing, a list, a slider) rather than to the page. */
function ownKey(e: KeyboardEvent, slider: boolean): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  const tag = t.tagName;
  if (t.isContentEditable || tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return (t as HTMLInputElement).type !== 'range' || slider;
  return false;
}

export interface Shortcuts {
  readonly togglePlay: () => void;
  readonly stepDecision: (dir: 1 | -1) => unknown;
  /** Zooms the timelines around the playhead (factor < 1 zooms in). */
  readonly zoom: (factor: number) => void;
  /** One notch slower (-1) or faster (1). */
  readonly changeSpeed: (dir: 1 | -1) => void;
  readonly toggleColumn: (i: number) => void;
  /** The previous or next lesson step; null without a lesson. */
  readonly stepLesson: ((delta: 1 | -1) => void) | null;
  readonly presenting: boolean;
  readonly setPresenting: Dispatch<SetStateAction<boolean>>;
  readonly helpOpen: boolean;
  readonly setHelpOpen: Dispatch<SetStateAction<boolean>>;
}

export function useShortcuts({
  togglePlay,
  stepDecision,
  zoom,
  changeSpeed,
  toggleColumn,
  stepLesson,
  presenting,
  setPresenting,
  helpOpen,
  setHelpOpen,
}: Shortcuts): void {
  useEffect(() => {
    /** What each key does; `slider`: the key is the focused slider's own (its arrows), not the page's. */
    const act = (run: (e: KeyboardEvent) => void, slider = false) => ({ run, slider });
    const zoomBy = (e: KeyboardEvent) => {
      e.preventDefault();
      zoom(e.key === '-' || e.key === '_' ? 2 : 0.5);
    };
    const decision = act((e) => {
      e.preventDefault();
      void stepDecision(e.key === 'ArrowRight' ? 1 : -1);
    }, true);
    const speed = act((e) => changeSpeed(e.key === ']' ? 1 : -1));
    const column = act((e) => toggleColumn(Number(e.key) - 1));
    const lessonStep = act((e) => {
      if (!stepLesson) return;
      e.preventDefault();
      stepLesson(e.key === 'PageDown' ? 1 : -1);
    });
    const present = act(() => setPresenting((v) => !v));
    const actions: Readonly<Record<string, { run: (e: KeyboardEvent) => void; slider: boolean }>> = {
      ' ': act((e) => {
        e.preventDefault();
        if (!e.repeat) togglePlay();
      }),
      ArrowLeft: decision,
      ArrowRight: decision,
      '+': act(zoomBy),
      '=': act(zoomBy),
      '-': act(zoomBy),
      _: act(zoomBy),
      '[': speed,
      ']': speed,
      '1': column,
      '2': column,
      '3': column,
      '4': column,
      PageDown: lessonStep,
      PageUp: lessonStep,
      p: present,
      P: present,
      '?': act((e) => {
        e.preventDefault();
        setHelpOpen((v) => !v);
      }),
      Escape: act(() => {
        if (helpOpen) setHelpOpen(false);
        else if (presenting) setPresenting(false);
      }),
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const action = Object.hasOwn(actions, e.key) ? actions[e.key] : undefined;
      if (!action || ownKey(e, action.slider)) return;
      action.run(e);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [
    togglePlay,
    stepDecision,
    zoom,
    changeSpeed,
    toggleColumn,
    stepLesson,
    presenting,
    setPresenting,
    helpOpen,
    setHelpOpen,
  ]);
}
