// Which optional views a run gets, decided by what the simulator says its scheduler is (`meta.caps`, from the
// scheduler registry) and by the scenario's domains, never by scheduler names.
import type { Meta } from '../sim/types';

/** Lag (paper 001) matters where co-scheduling does: a concurrent domain, or a scheduler judged by Lag. */
export function showsLag(meta: Meta): boolean {
  return meta.caps.lag || meta.domains.some((d) => d.concurrent === true);
}
