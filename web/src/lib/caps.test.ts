import { describe, expect, it } from 'vitest';
import type { Caps, Meta } from '../sim/types';
import { showsLag } from './caps';

const plain: Caps = { co_schedules: false, beliefs: false, lag: false };

function meta(caps: Caps, concurrent: boolean): Meta {
  return {
    scenario: 's',
    policy: 'p',
    label: 'p',
    pcpus: 2,
    duration_ns: 1e6,
    warmup_ns: 0,
    domains: [{ name: 'd', role: 'guest', vcpus: 2, weight: 256, cap_pct: 0, color_index: 0, concurrent }],
    vcpus: [],
    tasks: [],
    decisions: 0,
    decisions_dropped: 0,
    trace_detail_from_ns: 0,
    trace_detail_until_ns: null,
    trace_bytes: 0,
    caps,
  };
}

describe('showsLag', () => {
  it('follows the scheduler capability the simulator reports', () => {
    expect(showsLag(meta({ co_schedules: true, beliefs: false, lag: true }, false))).toBe(true);
    expect(showsLag(meta(plain, false))).toBe(false);
  });

  it('shows Lag for a concurrent domain under any scheduler', () => {
    expect(showsLag(meta(plain, true))).toBe(true);
  });
});
