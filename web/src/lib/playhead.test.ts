import { describe, expect, it } from 'vitest';
import { Playhead } from './playhead';

describe('Playhead', () => {
  it('tells its listeners of every change, and of nothing that is not one', () => {
    const ph = new Playhead(0, [0, 10]);
    const heard: number[] = [];
    const stop = ph.subscribe((s) => heard.push(s.time));
    ph.set({ time: 5 });
    ph.set({ time: 5 });
    ph.set({ view: ph.view });
    ph.set({ playing: true });
    stop();
    ph.set({ time: 7 });
    expect(heard).toEqual([5, 5]);
    expect(ph.get()).toEqual({ time: 7, view: [0, 10], playing: true, speed: 1 });
  });

  it('keeps the window object when only the time moves (views compare it by identity)', () => {
    const ph = new Playhead(0, [0, 10]);
    const view = ph.view;
    ph.set({ time: 3 });
    expect(ph.view).toBe(view);
  });
});
