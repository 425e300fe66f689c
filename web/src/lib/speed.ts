// Playback speed steps, shared by the transport's menu and the [ and ] keys.

/** Playback speeds: simulated ms per wall-clock ms (0.01x shows microsecond decisions, 1000x a minute in 60 s). */
export const SPEEDS = [0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] as const;

/** Playback speed the page starts at [simulated ms per ms]; a link carries any other. */
export const START_SPEED = 0.25;

/** The next speed up (dir 1) or down (dir -1) from `speed` in SPEEDS. */
export function nextSpeed(speed: number, dir: 1 | -1): number {
  const i = SPEEDS.findIndex((s) => s >= speed);
  const at = i < 0 ? SPEEDS.length - 1 : i;
  const j = SPEEDS[at] === speed || dir < 0 ? at + dir : at;
  return SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, j))]!;
}
