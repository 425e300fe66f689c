// A timeline track (as Perfetto's `Track`): one band of a column's timeline with one shape. `update` asks the
// run's worker for what the band draws of a window of detail at a resolution; `render` draws that answer into the
// band, at the shell's time scale, with a pen that fills rectangles (the shell's canvas strip, or the SVG export);
// `hover` says what is under the pointer. The shell (components/Timeline.tsx) owns the canvas, the time axis, the
// playhead, the zoom and the pointer, stacks the tracks of `TRACKS` (./index.ts) and asks each for the window its
// column's views share (lib/view `detailWindow`). A new track is a file here plus its query in the worker.
import type { ReactNode } from 'react';
import type { SimClient } from '../../sim/client';
import type { DetailWindow, Meta, RunOpening } from '../../sim/types';
import type { CanvasColors } from '../../lib/canvasColors';
import type { View } from '../../lib/view';

/** Fills a rectangle [px] in a colour at an opacity (1 when absent). */
export type Fill = (x: number, y: number, w: number, h: number, color: string, alpha?: number) => void;

/** Where a track draws: the time range [from, to] [ms] at x from `sx`, the width drawn [px] and the pen; y from
 * the band's top. */
export interface Paint {
  readonly from: number;
  readonly to: number;
  readonly sx: (t: number) => number;
  readonly width: number;
  readonly fill: Fill;
}

/** The pointer over a track: its time [ms], how much time a few pixels span [ms], y in the band [px]. */
export interface Pointer {
  readonly t: number;
  readonly slack: number;
  readonly y: number;
  /** Time under another x [px] (for the aggregates' columns). */
  readonly tAt: (x: number) => number;
}

/** What a track is made for: one run of a column, how it is coloured, and the shell's settings. */
export interface TrackContext {
  readonly run: RunOpening;
  readonly meta: Meta;
  readonly client: SimClient;
  /** Each vCPU's domain colour, and the same for the guest idle loop (paler). */
  readonly busy: readonly string[];
  readonly idle: readonly string[];
  readonly domainColor: (colorIndex: number) => string;
  readonly theme: CanvasColors;
  /** Presentation mode: thinner unlabelled rows where a track has many. */
  readonly presenting: boolean;
  /** Groups of rows the reader unfolded (a track's own numbering), and how to unfold one. */
  readonly unfolded: ReadonlySet<number>;
  readonly unfold: (group: number) => void;
}

/** A track made for one run: see the file's header. `D` is its answer for a window. */
export interface Track<D> {
  /** Band height [px]. */
  readonly height: number;
  /** Asks the worker what the band draws of `window` at `resolution` (pixels across the window). */
  readonly update: (window: DetailWindow, resolution: number) => Promise<D>;
  /** Draws an answer (it may be for another window than the one on screen: it draws where its times fall). */
  readonly render: (paint: Paint, data: D) => void;
  /** The tooltip's lines for the pointer, or null (nothing there). */
  readonly hover: (pointer: Pointer, data: D | null) => readonly string[] | null;
  /** The labels beside the band, as tall as it. */
  readonly labels: ReactNode;
  /** An answer at hand before any is asked for (a run's opening lanes). */
  readonly initial?: D;
  /** Test hooks and legend notes about an answer (`data-*` attributes of the timeline, by name). */
  readonly attrs?: (data: D | null) => Readonly<Record<string, string | number | undefined>>;
  /** The same, for the window on screen; read a few times a second while playing. */
  readonly viewAttrs?: (view: View, data: D | null) => Readonly<Record<string, string | number | undefined>>;
  /** What the legend says of the answer at this zoom: drawn per pixel (`aggregated`) or cut short (`full`). */
  readonly zoom?: (data: D | null) => { readonly aggregated: boolean; readonly full: boolean };
}

/** A kind of track, registered in `TRACKS`: its id, its name, and how it is made for a run. */
export interface TrackKind<D> {
  readonly id: string;
  /** What the legend calls it (the toggle of an optional track). */
  readonly title: string;
  /** Off until the reader turns it on in the legend. */
  readonly optional?: boolean;
  readonly make: (ctx: TrackContext) => Track<D>;
}

/**
 * A `Fill` for a canvas context that sets its fill style and alpha only when they change (a canvas parses every
 * colour it is given, and an aggregated band is some 10^5 rectangles). Nothing else may set them on `ctx` while
 * it is in use.
 */
export function canvasFill(ctx: CanvasRenderingContext2D): Fill {
  let style: string | null = null;
  let alpha = ctx.globalAlpha;
  return (x, y, w, h, color, a = 1) => {
    if (a !== alpha) {
      ctx.globalAlpha = a;
      alpha = a;
    }
    if (color !== style) {
      ctx.fillStyle = color;
      style = color;
    }
    ctx.fillRect(x, y, w, h);
  };
}

/** The gap between two tracks, and between the rows of a track that has several [px]. */
export const LANE_GAP = 4;
