import { ms } from '../lib/format';

export const SPEEDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5] as const;

interface Props {
  readonly time: number;
  readonly durationMs: number;
  readonly playing: boolean;
  readonly speed: number;
  readonly disabled: boolean;
  readonly onToggle: () => void;
  readonly onSpeed: (speed: number) => void;
  readonly onScrub: (time: number) => void;
}

/** The one playhead shared by every column: play/pause (Space), speed, scrub. */
export function Transport({ time, durationMs, playing, speed, disabled, onToggle, onSpeed, onScrub }: Props) {
  return (
    <div className="transport">
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
      <label>
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
