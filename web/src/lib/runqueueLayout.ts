// Where each run-queue chip sits (slot -> position) and which chip a pointer is on (position -> slot): the run
// queues are drawn on canvas, so hovering needs the inverse of the layout.
import type { Meta, PriClass, RunQueueEntry, RunQueueSnap } from '../sim/types';

export const CHIP_W = 92;
export const CHIP_H = 34;
export const GAP = 4;

/** Top-left corner of slot `slot` when `perRow` chips fit a row [px]. */
export function slotPosition(slot: number, perRow: number): { x: number; y: number } {
  return { x: (slot % perRow) * (CHIP_W + GAP), y: Math.floor(slot / perRow) * (CHIP_H + GAP) };
}

/** The slot whose chip covers (px, py), or -1 in a gap or beyond the last row's `perRow` chips. */
export function slotAt(px: number, py: number, perRow: number): number {
  if (px < 0 || py < 0) return -1;
  const col = Math.floor(px / (CHIP_W + GAP));
  const row = Math.floor(py / (CHIP_H + GAP));
  if (col >= perRow || px - col * (CHIP_W + GAP) > CHIP_W || py - row * (CHIP_H + GAP) > CHIP_H) return -1;
  return row * perRow + col;
}

/** A pCPU's queue as drawn: the running vCPU first, then the queued ones; an idle pCPU's first slot says so. */
export interface QueueRow {
  readonly entries: readonly RunQueueEntry[];
  /** The pCPU runs nothing: slot 0 is the "idle" box and the entries start at slot 1. */
  readonly idle: boolean;
  /** Whether entries[0] is running. */
  readonly running: boolean;
}

export function queueRow(snap: RunQueueSnap | null): QueueRow {
  if (!snap) return { entries: [], idle: false, running: false };
  return {
    entries: snap.running ? [snap.running, ...snap.queued] : snap.queued,
    idle: !snap.running,
    running: snap.running !== null,
  };
}

/** Everything a row draws, as one string: rows whose key did not change are not redrawn. */
export function rowKey(row: QueueRow): string {
  return `${row.idle ? 'i' : ''}${row.entries.map((e) => `${e.vcpu}:${e.class}:${e.pri}:${e.credit ?? ''}`).join(',')}`;
}

/** The chip's name and what its hover says (and the accessible list reads). */
export function chipText(
  meta: Meta,
  entry: RunQueueEntry,
  slot: number,
  running: boolean,
): { name: string; title: string } {
  const vcpu = meta.vcpus[entry.vcpu];
  const domain = vcpu ? meta.domains[vcpu.domain] : undefined;
  const name = vcpu?.name ?? `vCPU ${entry.vcpu}`;
  const credit = entry.credit === undefined ? '' : `, ${entry.credit} credit`;
  return {
    name,
    title: `${name} (${domain?.name ?? '?'}) ${running ? 'running' : `queued ${slot}`}: ${entry.pri}${credit}`,
  };
}

/** `text` cut to fit `maxW` with an ellipsis, as measured by `measure` [px]. */
export function ellipsize(text: string, maxW: number, measure: (s: string) => number): string {
  if (measure(text) <= maxW) return text;
  let n = text.length;
  while (n > 0 && measure(`${text.slice(0, n)}…`) > maxW) n--;
  return `${text.slice(0, n)}…`;
}

/**
 * How a chip's priority label is drawn, by the class the policy gave it (never by the label's words, so a new
 * policy's labels get the same look): BOOST in the warning colour, OVER and PARKED quiet, PARKED in italics.
 */
export function priStyle(cls: PriClass): { tone: 'bad' | 'muted' | 'fg'; italic: boolean } {
  const tone = cls === 'boost' ? 'bad' : cls === 'over' || cls === 'parked' ? 'muted' : 'fg';
  return { tone, italic: cls === 'parked' };
}
