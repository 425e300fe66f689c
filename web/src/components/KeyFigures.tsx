// The scenario's point on one screen: its focus metrics per focus policy, large, with what the paper
// reports beside ours and whether the claims on that metric hold. It sits at the top of the page, above the
// columns, so a projector shows it with the timelines.
import { memo, type CSSProperties } from 'react';
import type { ClaimResult, RunResult, ScenarioClaim } from '../sim/types';
import { claimMetrics, metricLabel, metricValue, type Focus } from '../lib/focus';
import { fmt } from '../lib/format';
import { Terms } from './Reference';

interface Props {
  readonly focus: Focus;
  /** Finished runs by policy id. */
  readonly runs: Readonly<Record<string, RunResult>>;
  /** The scenario file's claims, and their verdicts once judged (same order). */
  readonly stated: readonly ScenarioClaim[];
  readonly claims: readonly ClaimResult[] | null;
  readonly labelOf: (policy: string) => string;
  /** The page's columns (policy ids, numbered from 1 in their headers), hidden ones included. */
  readonly columns: readonly string[];
  /** The scenario was edited: the paper's values and the claim texts may no longer describe it. */
  readonly stale: boolean;
}

/** From this many focus policies their labels do not fit beside the values (four columns leave a card ~70 px
 * a value): each value is labelled by its column's number (the column headers name the policies), or where some
 * focus policy is not a column, by a letter that one key above the cards names in full. */
const KEYED_FROM = 4;

/** The badge a keyed value goes by: its column's number, else a letter. */
function badges(
  policies: readonly string[],
  columns: readonly string[],
): { text: string; column: boolean }[] {
  const numbers = policies.map((p) => columns.indexOf(p));
  return numbers.every((n) => n >= 0)
    ? numbers.map((n) => ({ text: String(n + 1), column: true }))
    : policies.map((_, i) => ({ text: String.fromCharCode(65 + i), column: false }));
}

/** Shares and ratios read better as percentages. */
function show(path: string, v: number | undefined): string {
  if (v === undefined) return '–';
  if (/cpu_share|fair_share|pbhr$/.test(path)) return `${(v * 100).toFixed(1)}%`;
  return fmt(v, 3);
}

export const KeyFigures = memo(function KeyFigures({
  focus,
  runs,
  stated,
  claims,
  labelOf,
  columns,
  stale,
}: Props) {
  if (focus.metrics.length === 0) return null;
  const keyed = focus.policies.length >= KEYED_FROM;
  const badge = badges(focus.policies, columns);
  const byColumn = badge.every((b) => b.column);
  const seen = new Set<string>();
  return (
    <section
      className={`key-figures${keyed ? ' keyed' : ''}`}
      data-testid="key-figures"
      aria-label="Key figures"
    >
      {keyed && !byColumn && (
        <p className="key-figure-key" data-testid="key-figure-key">
          {focus.policies.map((p, i) => (
            <span key={p}>
              <span className="key-figure-letter">{badge[i]?.text}</span> {labelOf(p)}
            </span>
          ))}
        </p>
      )}
      <div className="key-figure-cards">
        {focus.metrics.map((path) => {
          const on = stated.flatMap((c, i) => (claimMetrics(c).includes(path) ? [i] : []));
          const judged = claims
            ? on.map((i) => claims[i]).filter((c): c is ClaimResult => c !== undefined)
            : [];
          const held = judged.filter((c) => c.holds).length;
          const paper = on.map((i) => stated[i]?.paper).find((p) => p !== undefined);
          const verdict =
            judged.length === 0 ? null : held === judged.length ? 'holds' : held === 0 ? 'fails' : 'mixed';
          return (
            <div
              key={path}
              className={`key-figure${verdict ? ` ${verdict}` : ''}`}
              data-testid="key-figure"
              data-metric={path}
              data-holds={verdict === null ? undefined : String(verdict === 'holds')}
            >
              <div className="key-figure-head">
                <span className="key-figure-metric" title={path}>
                  <Terms text={metricLabel(path)} seen={seen} />
                </span>
                {verdict && (
                  <span
                    className="key-figure-verdict"
                    aria-label={`${held} of ${judged.length} claims on it hold`}
                    title={`${held} of ${judged.length} claims on this figure hold`}
                  >
                    {/* In words: a bare mark on a first screen told a class nothing. */}
                    {verdict === 'holds'
                      ? '✓ claim holds'
                      : verdict === 'fails'
                        ? '✗ claim fails'
                        : `${held} of ${judged.length} claims hold`}
                  </span>
                )}
              </div>
              <dl
                className="key-figure-values"
                style={{ '--values': focus.policies.length } as CSSProperties}
              >
                {focus.policies.map((p, i) => (
                  <div key={p}>
                    <dt title={labelOf(p)}>
                      {keyed ? (
                        <span
                          className={byColumn ? 'col-number' : 'key-figure-letter'}
                          aria-label={labelOf(p)}
                          title={byColumn ? `Column ${badge[i]?.text}: ${labelOf(p)}` : labelOf(p)}
                        >
                          {badge[i]?.text}
                        </span>
                      ) : (
                        labelOf(p)
                      )}
                    </dt>
                    <dd data-testid="key-figure-value" data-policy={p}>
                      {runs[p] ? show(path, metricValue(runs[p].report, path)) : '…'}
                    </dd>
                  </div>
                ))}
              </dl>
              {paper && (
                <p className={`key-figure-paper${stale ? ' stale' : ''}`} data-testid="key-figure-paper">
                  <span className="muted">Paper{stale ? ' (for the original scenario)' : ''}:</span> {paper}
                </p>
              )}
            </div>
          );
        })}
      </div>
    </section>
  );
});
