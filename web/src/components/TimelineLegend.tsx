// The timeline's legend: the domains' colours, what each track draws, the optional tracks' toggles, and whether
// this zoom shows each span or aggregates per pixel.
import { memo } from 'react';
import type { Meta } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { Terms } from './Reference';
import type { TrackKind } from './tracks/track';

/** The state lanes' legend: each item's mark (its class), and its text in a wide and in a narrow column. */
const STATE_LEGEND = [
  { mark: 'swatch running', long: 'running', short: 'run' },
  { mark: 'swatch spin', long: 'spinning', short: 'spin' },
  { mark: 'swatch runnable', long: 'runnable', short: 'queued' },
  { mark: 'wake-tick', long: 'wake → run; blank: blocked', short: 'wake' },
] as const;
/** Beyond this many domains colours repeat and the legend would crowd out the chart; hovering names them. */
const LEGEND_MAX = 16;
/** The domains' colours, then what the strip and the state lanes draw: compact (short labels in a narrow column,
 * the full meaning in each title) so four columns side by side stay tidy. Memoised, like the lane labels: the
 * timeline re-renders once per window width while playing. */
export const Legend = memo(function Legend({
  meta,
  full,
  aggregated,
  optional,
  shown,
  onToggle,
}: {
  meta: Meta;
  /** A track's answer was cut short at this zoom. */
  full: boolean;
  /** Which views show per-pixel aggregates at this zoom: the state lanes, the I/O strip, or both. */
  aggregated: string | null;
  /** The tracks the reader may turn on or off, and which are on. */
  optional: readonly TrackKind<unknown>[];
  shown: ReadonlySet<string>;
  onToggle: (id: string) => void;
}) {
  const domainColor = useDomainColor();
  // A term's first use in the legend links to the glossary, once in each length (only one length is shown).
  const seen = { long: new Set<string>(), short: new Set<string>() };
  return (
    <figcaption className="legend">
      {meta.domains.slice(0, LEGEND_MAX).map((d) => (
        <span key={d.name} className="legend-item">
          <span className="swatch" style={{ background: domainColor(d.color_index) }} />
          {d.name}
        </span>
      ))}
      {meta.domains.length > LEGEND_MAX && (
        <span className="legend-item muted">
          and {meta.domains.length - LEGEND_MAX} more (hover a segment)
        </span>
      )}
      <span
        className="legend-item muted"
        title="Pale: the guest idle loop (the vCPU holds the pCPU but does no work)"
      >
        <span className="swatch idle" />
        <Short long="pale: guest idle loop" short="idle loop" seen={seen} />
      </span>
      <span
        className="legend-item muted"
        title="The I/O wait strip: each event-channel notification as a bar from pending until its vCPU ran"
      >
        <Short
          long="I/O wait: event pending until its vCPU runs"
          short="I/O wait: pending → ran"
          seen={seen}
        />
      </span>
      <span
        className="legend-states muted"
        data-testid="state-legend"
        title={
          'The vCPU lanes under the I/O strip: running; spinning at a barrier; runnable (queued for a pCPU); ' +
          'a tick at each wake-up with a line to the dispatch that followed; blank: blocked'
        }
      >
        {STATE_LEGEND.map(({ mark, long, short }) => (
          <span className="legend-item" key={short}>
            <span className={mark} />
            <Short long={long} short={short} seen={seen} />
          </span>
        ))}
      </span>
      {optional.map((k) => (
        <label
          key={k.id}
          className="legend-item legend-toggle muted"
          data-no-export
          title={`Show the ${k.title} under the state lanes`}
        >
          <input
            type="checkbox"
            data-testid={`track-toggle-${k.id}`}
            checked={shown.has(k.id)}
            onChange={() => onToggle(k.id)}
          />
          {k.title}
        </label>
      ))}
      {(aggregated || full) && (
        <span
          className="legend-item legend-zoom"
          data-testid="legend-zoom"
          data-aggregated={aggregated ?? 'none'}
          title={
            aggregated
              ? 'Too many spans or notifications in this window to draw each: the state lanes show each vCPU’s ' +
                'share of time per pixel (stacked running, spinning, runnable), the I/O strip the ' +
                'notifications delivered per pixel (bar height on a log scale; hover for counts). Zoom in for ' +
                'every span.'
              : 'Too many spans or notifications in this window to draw each: zoom in.'
          }
        >
          {aggregated ? (
            <Short
              long={`${aggregated} aggregated per pixel at this zoom: zoom in for detail`}
              short="aggregated at this zoom"
            />
          ) : (
            'zoom in for detail'
          )}
        </span>
      )}
    </figcaption>
  );
});

/** A legend label in two lengths: the short one in a narrow column (styles.css `.legend` container query); with
 * `seen`, a glossary term's first use in each length links to its entry. */
function Short({
  long,
  short,
  seen,
}: {
  long: string;
  short: string;
  seen?: { long: Set<string>; short: Set<string> };
}) {
  return (
    <>
      <span className="lg-long">{seen ? <Terms text={long} seen={seen.long} /> : long}</span>
      <span className="lg-short">{seen ? <Terms text={short} seen={seen.short} /> : short}</span>
    </>
  );
}
