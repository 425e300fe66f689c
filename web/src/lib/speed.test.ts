import { describe, expect, it } from 'vitest';
import { SPEEDS, nextSpeed } from './speed';

describe('playback speeds', () => {
  it('span 0.01x to 1000x of simulated time', () => {
    expect(SPEEDS[0]).toBe(0.01);
    expect(SPEEDS[SPEEDS.length - 1]).toBe(1000);
  });
  it('step up and down through the list and stop at its ends', () => {
    expect(nextSpeed(1, 1)).toBe(2);
    expect(nextSpeed(1, -1)).toBe(0.5);
    expect(nextSpeed(1000, 1)).toBe(1000);
    expect(nextSpeed(0.01, -1)).toBe(0.01);
    // A speed between two steps moves to the neighbour in that direction.
    expect(nextSpeed(3, 1)).toBe(5);
    expect(nextSpeed(3, -1)).toBe(2);
  });
});
