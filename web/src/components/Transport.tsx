import { useCallback, useRef } from 'react';
import { ms } from '../lib/format';
import { PLAYING_REFRESH_MS } from '../lib/useLatestQuery';
import { usePlayheadEffect, type Playhead, type PlayheadState } from '../lib/playhead';
import { SPEEDS } from '../lib/speed';

interface Props {
  readonly playhead: Playhead;
  readonly durationMs: number;
  readonly playing: boolean;
  readonly speed: number;
  readonly disabled: boolean;
  readonly onToggle: () => void;
  readonly onSpeed: (speed: number) => void;
  readonly onScrub: (time: number) => void;
  /** Moves the playhead to the previous (-1) or next (1) scheduling decision. */
  readonly onStep?: (dir: 1 | -1) => void;
}

/** The one playhead shared by every column: play/pause (Space), step (arrows), speed ([ and ]), scrub. */
export function Transport({
  playhead,
  durationMs,
  playing,
  speed,
  disabled,
  onToggle,
  onSpeed,
  onScrub,
  onStep,
}: Props) {
  // The clock and the slider are written straight to the DOM, a few times a second while playing: every frame,
  // repainting them cost more main-thread time than all four columns' timelines (paint, layerize and commit of
  // the sticky bar, measured on bench-large), and a clock that changes 60 times a second cannot be read anyway.
  // Scrubbing and stepping show at once.
  const slider = useRef<HTMLInputElement>(null);
  const clock = useRef<HTMLOutputElement>(null);
  const show = useCallback(
    ({ time }: PlayheadState) => {
      const input = slider.current;
      const out = clock.current;
      // The slider's max is set by React in the same commit, before this runs.
      if (input) input.value = String(Math.min(time, durationMs));
      if (out) {
        out.dataset.ms = String(time);
        out.textContent = ms(time);
      }
    },
    [durationMs],
  );
  usePlayheadEffect(playhead, show, { playingMs: PLAYING_REFRESH_MS });
  return (
    <div className="transport">
      {onStep && (
        <button
          type="button"
          data-testid="step-prev"
          onClick={() => onStep(-1)}
          disabled={disabled}
          title="Previous decision (←)"
          aria-label="Previous decision"
        >
          ‹ prev
        </button>
      )}
      <button
        type="button"
        data-testid="play"
        onClick={onToggle}
        disabled={disabled}
        aria-pressed={playing}
        title="Play / pause (Space)"
      >
        {playing ? '❚❚ Pause' : '▶ Play'}
      </button>
      {onStep && (
        <button
          type="button"
          data-testid="step-next"
          onClick={() => onStep(1)}
          disabled={disabled}
          title="Next decision (→)"
          aria-label="Next decision"
        >
          next ›
        </button>
      )}
      <label title="Simulated time per wall-clock time ([ slower, ] faster)">
        speed{' '}
        <select data-testid="speed" value={speed} onChange={(e) => onSpeed(Number(e.target.value))}>
          {SPEEDS.map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </select>
      </label>
      <input
        type="range"
        data-testid="scrub"
        aria-label="Playhead"
        min={0}
        max={durationMs}
        step={Math.max(durationMs / 10000, 0.001)}
        ref={slider}
        disabled={disabled}
        onChange={(e) => onScrub(Number(e.target.value))}
      />
      <span className="time">
        <output ref={clock} data-testid="playhead-time" /> / {ms(durationMs)} ms
      </span>
    </div>
  );
}
