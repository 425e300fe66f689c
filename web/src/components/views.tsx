// The views of a policy column, top to bottom, in one list: the column renders it, and lessons point at its ids
// (each view's root element carries `data-view` with its id; `viewSelector`). A new view is an entry here; a
// new band of the timeline is a track (./tracks).
import type { ReactNode } from 'react';
import type { SimClient } from '../sim/client';
import type { RunOpening, RunResult } from '../sim/types';
import { showsLag } from '../lib/caps';
import type { Playhead } from '../lib/playhead';
import type { View } from '../lib/view';
import { BeliefChart } from './BeliefChart';
import { EventLog } from './EventLog';
import { LagChart } from './LagChart';
import { MetricsTable } from './MetricsTable';
import { RunQueues } from './RunQueues';
import { ShareChart } from './ShareChart';
import { Timeline } from './Timeline';

/** What every view of a column is drawn from: the run, or before it is done its opening window. */
export interface ColumnViewProps<R extends RunOpening = RunResult> {
  readonly client: SimClient;
  readonly run: R;
  readonly durationMs: number;
  /** The shared playhead and time window: each view subscribes at the rate it draws them. */
  readonly playhead: Playhead;
  readonly onViewChange: (view: View) => void;
  /** Moves the shared playhead [ms]. */
  readonly onSeek: (time: number) => void;
}

export interface ColumnView {
  /** What lessons point at (the view's root carries it as `data-view`). */
  readonly id: string;
  readonly title: string;
  /** The view, or null where the run has nothing for it. */
  readonly render: (p: ColumnViewProps) => ReactNode;
  /** The view drawn from the run's opening window while the run goes on (views that can: the first frame). */
  readonly early?: (p: ColumnViewProps<RunOpening>) => ReactNode;
  /** The view shows what a policy's model holds (its task inference): a recorded trace has nothing for it. */
  readonly model?: boolean;
}

/** The timeline draws from the opening window as well as from the finished run. */
function timeline(p: ColumnViewProps<RunOpening>): ReactNode {
  return (
    <Timeline
      client={p.client}
      run={p.run}
      durationMs={p.durationMs}
      playhead={p.playhead}
      onViewChange={p.onViewChange}
    />
  );
}

export const COLUMN_VIEWS: readonly ColumnView[] = [
  {
    id: 'runqueues',
    title: 'Run queues',
    render: (p) => <RunQueues client={p.client} run={p.run} playhead={p.playhead} />,
  },
  { id: 'timeline', title: 'Timeline', render: timeline, early: timeline },
  {
    id: 'trace-note',
    title: 'Where the detailed trace ends',
    render: ({ run }) =>
      run.capNs === 0 &&
      run.meta.trace_detail_until_ns != null && (
        <p className="muted trace-note" data-testid="trace-note" data-view="trace-note">
          Detailed trace ends at {(run.meta.trace_detail_until_ns / 1e6).toFixed(1)} ms (memory budget); run
          queues and the log stop there, shares continue.
        </p>
      ),
  },
  {
    id: 'event-log',
    title: 'Decision log',
    render: (p) => <EventLog client={p.client} run={p.run} playhead={p.playhead} onSeek={p.onSeek} />,
  },
  {
    id: 'share-chart',
    title: 'CPU share over time',
    render: (p) => <ShareChart run={p.run} durationMs={p.durationMs} playhead={p.playhead} />,
  },
  {
    id: 'belief-chart',
    title: 'Task inference',
    model: true,
    render: (p) => (
      <BeliefChart client={p.client} run={p.run} durationMs={p.durationMs} playhead={p.playhead} />
    ),
  },
  {
    id: 'lag-chart',
    title: 'Lag',
    render: (p) =>
      showsLag(p.run.meta) && (
        <LagChart client={p.client} run={p.run} durationMs={p.durationMs} playhead={p.playhead} />
      ),
  },
  {
    id: 'metrics-table',
    title: 'Metrics',
    render: (p) => <MetricsTable meta={p.run.meta} report={p.run.report} />,
  },
];

/** The selector of a column view's root by its id, for lessons; null for an id no view registers. */
export function viewSelector(id: string): string | null {
  return COLUMN_VIEWS.some((v) => v.id === id) ? `[data-view="${CSS.escape(id)}"]` : null;
}
