import { memo } from 'react';
import type { Meta, RunReport, Summary } from '../sim/types';
import { useDomainColor } from '../lib/theme';
import { fmt, pct } from '../lib/format';

interface Props {
  readonly meta: Meta;
  readonly report: RunReport;
}

function meanP99(s: Summary | undefined): string {
  if (!s || s.count === 0) return '–';
  return `${fmt(s.mean)} / ${fmt(s.p99)}`;
}

/** The report's headline figures per domain; absent keys show a dash, never a made-up zero. */
/** Memoised: it does not depend on the playhead, and the page re-renders on every playback frame. */
export const MetricsTable = memo(function MetricsTable({ meta, report }: Props) {
  const domainColor = useDomainColor();
  const anyResponse = meta.domains.some((d) => report.domains[d.name]?.response_ms);
  return (
    <div className="metrics-scroll" data-view="metrics-table">
      <table className="metrics" data-testid="metrics-table">
        <thead>
          <tr>
            <th>domain</th>
            <th title="share of the host's CPU after warm-up">CPU share</th>
            <th title="entitlement if every domain were busy">fair</th>
            {anyResponse && <th title="request response time, mean / p99 [ms]">response ms</th>}
            <th title="event pending until the vCPU runs, mean / p99 [ms]">event lat. ms</th>
          </tr>
        </thead>
        <tbody>
          {meta.domains.map((d) => {
            const r = report.domains[d.name];
            return (
              <tr key={d.name}>
                <td>
                  <span className="swatch" style={{ background: domainColor(d.color_index) }} />
                  {d.name}
                </td>
                <td>{pct(r?.cpu_share)}</td>
                <td>{pct(r?.fair_share)}</td>
                {anyResponse && <td>{meanP99(r?.response_ms)}</td>}
                <td>{meanP99(r?.event_latency_ms)}</td>
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          <tr>
            <td colSpan={anyResponse ? 5 : 4}>
              Jain fairness {fmt(report.fairness?.jain)} · max lag {fmt(report.fairness?.max_abs_lag_ms)} ms ·{' '}
              {fmt(report.events, 6)} events
            </td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
});
