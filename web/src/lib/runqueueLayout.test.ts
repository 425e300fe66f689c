import { describe, expect, it } from 'vitest';
import type { Meta } from '../sim/types';
import {
  CHIP_H,
  CHIP_W,
  GAP,
  chipText,
  ellipsize,
  priStyle,
  queueRow,
  rowKey,
  slotAt,
  slotPosition,
} from './runqueueLayout';

describe('run-queue layout', () => {
  it('places slots row by row and finds them again under the pointer', () => {
    for (const perRow of [1, 3, 4]) {
      for (let slot = 0; slot < 10; slot++) {
        const { x, y } = slotPosition(slot, perRow);
        expect(slotAt(x + 1, y + 1, perRow)).toBe(slot);
        expect(slotAt(x + CHIP_W - 1, y + CHIP_H - 1, perRow)).toBe(slot);
      }
    }
    expect(slotPosition(5, 4)).toEqual({ x: CHIP_W + GAP, y: CHIP_H + GAP });
  });

  it('finds no chip in the gaps, left of the row or beyond the last column', () => {
    expect(slotAt(CHIP_W + GAP / 2, 5, 4)).toBe(-1);
    expect(slotAt(5, CHIP_H + GAP / 2, 4)).toBe(-1);
    expect(slotAt(-1, 5, 4)).toBe(-1);
    expect(slotAt(2 * (CHIP_W + GAP) + 5, 5, 2)).toBe(-1);
  });

  it('puts the running vCPU first, and an idle box first on an idle pCPU', () => {
    const a = { vcpu: 1, pri: 'UNDER', class: 'under', credit: 10 } as const;
    const b = { vcpu: 2, pri: 'BOOST', class: 'boost' } as const;
    expect(queueRow({ t_ns: 0, running: a, queued: [b] })).toEqual({
      entries: [a, b],
      idle: false,
      running: true,
    });
    expect(queueRow({ t_ns: 0, running: null, queued: [b] })).toEqual({
      entries: [b],
      idle: true,
      running: false,
    });
    expect(queueRow(null)).toEqual({ entries: [], idle: false, running: false });
    expect(rowKey(queueRow({ t_ns: 0, running: a, queued: [b] }))).not.toBe(
      rowKey(queueRow({ t_ns: 0, running: { ...a, credit: 9 }, queued: [b] })),
    );
  });

  it('names the chip with its domain, place, class and credit', () => {
    const meta = {
      vcpus: [{ name: 'web.v0', domain: 0 }],
      domains: [{ name: 'web' }],
    } as unknown as Meta;
    expect(chipText(meta, { vcpu: 0, pri: 'OVER', class: 'over', credit: -5 }, 2, false).title).toBe(
      'web.v0 (web) queued 2: OVER, -5 credit',
    );
    expect(chipText(meta, { vcpu: 0, pri: 'BOOST', class: 'boost' }, 0, true).title).toBe(
      'web.v0 (web) running: BOOST',
    );
  });

  it('keys a row by class as well as label', () => {
    const row = (cls: 'under' | 'other') =>
      queueRow({ t_ns: 0, running: null, queued: [{ vcpu: 0, pri: 'X', class: cls }] });
    expect(rowKey(row('under'))).not.toBe(rowKey(row('other')));
  });

  it('styles a label by its class, not its words', () => {
    expect(priStyle('boost')).toEqual({ tone: 'bad', italic: false });
    expect(priStyle('over')).toEqual({ tone: 'muted', italic: false });
    expect(priStyle('parked')).toEqual({ tone: 'muted', italic: true });
    for (const cls of ['under', 'reserved', 'extra', 'waiting', 'blocked', 'idle', 'other'] as const) {
      expect(priStyle(cls)).toEqual({ tone: 'fg', italic: false });
    }
  });

  it('cuts long names with an ellipsis to fit', () => {
    const measure = (s: string) => s.length * 10;
    expect(ellipsize('short', 100, measure)).toBe('short');
    expect(ellipsize('a-very-long-name', 60, measure)).toBe('a-ver…');
  });
});
