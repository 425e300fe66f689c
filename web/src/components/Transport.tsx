import { ms } from '../lib/format';
import { selectTime, usePlayhead, type Playhead } from '../lib/playhead';
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
  // The clock and the slider follow every frame; they are all this component re-renders for while playing.
  const time = usePlayhead(playhead, selectTime);
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
        value={Math.min(time, durationMs)}
        disabled={disabled}
        onChange={(e) => onScrub(Number(e.target.value))}
      />
      <span className="time">
        <output data-testid="playhead-time" data-ms={time}>
          {ms(time)}
        </output>{' '}
        / {ms(durationMs)} ms
      </span>
    </div>
  );
}
