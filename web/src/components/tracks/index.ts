// The timeline's tracks, top to bottom: every column's timeline stacks these (an optional one once the reader
// turns it on in the legend). A new track is a file beside these (./track.ts) and a line here.
import { ioStrip } from './IoStrip';
import { pcpuLanes } from './PcpuLanes';
import type { TrackKind } from './track';
import { vcpuStates } from './VcpuStates';
import { wakeLatency } from './WakeLatency';

// Each kind answers with its own data; the shell keeps each track's answer beside its track.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const TRACKS: readonly TrackKind<any>[] = [pcpuLanes, ioStrip, vcpuStates, wakeLatency];
