// Each pCPU's run queue at the playhead: the running vCPU, then the queued ones in order, as chips coloured by
// domain. Chips are keyed by vCPU and placed with a transform, so when the order changes the CSS transition
// slides each chip to its new slot and a BOOSTed vCPU visibly jumps the queue.
import { useCallback, useRef } from 'react';
import type { SimClient } from '../sim/client';
import type { Meta, RunQueueEntry, RunResult } from '../sim/types';
import { domainColor } from '../lib/palette';
import { withAlpha } from '../lib/color';
import { toNs } from '../lib/decisions';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import { useWidth } from '../lib/useWidth';

const CHIP_W = 92;
const CHIP_H = 34;
const GAP = 4;
/** Up to this many pCPUs chips slide to their new slot; beyond, dozens of chips per column moving at once cost
 * the browser a compositing pass per frame during playback, so they jump. */
const ANIMATE_MAX_PCPUS = 4;
/** Beyond this many pCPUs the rows scroll instead of pushing the timeline off screen. */
const ROWS_BEFORE_SCROLL = 4;

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  /** Playhead [ms]. */
  readonly time: number;
  /** Playback is running: refresh every PLAYING_REFRESH_MS, not every frame. */
  readonly playing?: boolean;
}

function Chip({
  meta,
  entry,
  slot,
  perRow,
  running,
}: {
  meta: Meta;
  entry: RunQueueEntry;
  slot: number;
  perRow: number;
  running: boolean;
}) {
  const vcpu = meta.vcpus[entry.vcpu];
  const domain = vcpu ? meta.domains[vcpu.domain] : undefined;
  const color = domainColor(domain?.color_index ?? entry.vcpu);
  const name = vcpu?.name ?? `vCPU ${entry.vcpu}`;
  const x = (slot % perRow) * (CHIP_W + GAP);
  const y = Math.floor(slot / perRow) * (CHIP_H + GAP);
  const credit = entry.credit === undefined ? '' : ` · ${entry.credit}`;
  return (
    <div
      className={`rq-chip pri-${entry.pri.toLowerCase()}${running ? ' running' : ''}`}
      data-testid="rq-chip"
      data-vcpu={entry.vcpu}
      data-pri={entry.pri}
      data-running={running}
      data-slot={slot}
      style={{
        transform: `translate(${x}px, ${y}px)`,
        width: CHIP_W,
        height: CHIP_H,
        borderLeftColor: color,
        background: withAlpha(color, running ? 0.32 : 0.14),
      }}
      title={`${name} (${domain?.name ?? '?'}) ${running ? 'running' : `queued ${slot}`}: ${entry.pri}${
        entry.credit === undefined ? '' : `, ${entry.credit} credit`
      }`}
    >
      <span className="rq-name">
        {running && <span aria-label="running">▶ </span>}
        {name}
      </span>
      <span className="rq-pri">
        <b>{entry.pri}</b>
        {credit}
      </span>
    </div>
  );
}

export function RunQueues({ client, run, time, playing = false }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref, 400);
  const tNs = toNs(time);
  const { runId } = run;
  const query = useCallback(() => client.runqueues(runId, tNs), [client, runId, tNs]);
  const { value, error } = useLatestQuery(query, playing ? PLAYING_REFRESH_MS : 0);
  const { meta } = run;
  const perRow = Math.max(1, Math.floor((width - 52 + GAP) / (CHIP_W + GAP)));
  const scroll = meta.pcpus > ROWS_BEFORE_SCROLL;

  return (
    <figure
      className={meta.pcpus <= ANIMATE_MAX_PCPUS ? 'runqueues animate' : 'runqueues'}
      aria-label="Run queue per pCPU at the playhead"
    >
      <figcaption className="muted">
        Run queues at the playhead: ▶ running, then queued in order (priority · credit)
        {error && ` — unavailable: ${error}`}
      </figcaption>
      <div ref={ref} className={scroll ? 'rq-rows scroll' : 'rq-rows'}>
        {Array.from({ length: meta.pcpus }, (_, p) => {
          const snap = value?.[p] ?? null;
          const entries = snap ? [...(snap.running ? [snap.running] : []), ...snap.queued] : [];
          const idle = snap !== null && !snap.running;
          const rows = Math.max(1, Math.ceil((entries.length + (idle ? 1 : 0)) / perRow));
          return (
            <div
              key={p}
              className="rq-row"
              data-testid={`runqueue-pcpu-${p}`}
              data-queued={snap?.queued.length}
            >
              <div className="rq-label">pCPU {p}</div>
              <div className="rq-slots" style={{ height: rows * (CHIP_H + GAP) - GAP }}>
                {idle && (
                  <div className="rq-idle muted" style={{ width: CHIP_W, height: CHIP_H }}>
                    idle
                  </div>
                )}
                {entries.map((e, i) => (
                  <Chip
                    key={e.vcpu}
                    meta={meta}
                    entry={e}
                    slot={idle ? i + 1 : i}
                    perRow={perRow}
                    running={snap?.running === e}
                  />
                ))}
              </div>
            </div>
          );
        })}
      </div>
    </figure>
  );
}
