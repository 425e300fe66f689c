import { useMemo } from 'react';
import { groupByKind, type ScenarioIndex } from '../lib/scenarios';

interface Props {
  readonly index: ScenarioIndex | null;
  /** Still loading index.json (else a null index means it failed; the banner says why). */
  readonly loading: boolean;
  /** Id of the library scenario on screen, null for a user's own file. */
  readonly current: string | null;
  readonly onSelect: (id: string) => void;
  /** Scenarios whose titles and summaries would answer a lesson's open question: shown by id until then. */
  readonly concealed?: ReadonlySet<string>;
}

/** The scenario library from scenarios/index.json, grouped by kind. Links carry the share URL. */
export function Library({ index, loading, current, onSelect, concealed }: Props) {
  const groups = useMemo(() => (index ? groupByKind(index) : []), [index]);
  return (
    <nav className="library" data-testid="scenario-library" aria-label="Scenario library">
      <h2>Scenarios</h2>
      {!index && <p className="muted">{loading ? 'Loading the library…' : 'The library is unavailable.'}</p>}
      {groups.map(([kind, entries]) => (
        <section key={kind}>
          <h3>{kind}</h3>
          <ul>
            {entries.map((s) => {
              const hide = concealed?.has(s.id) ?? false;
              return (
                <li key={s.id}>
                  <a
                    href={`?scenario=${encodeURIComponent(s.id)}`}
                    data-scenario={s.id}
                    aria-current={s.id === current ? 'page' : undefined}
                    title={
                      hide
                        ? undefined
                        : [s.summary, s.source && `Source: ${s.source}`].filter(Boolean).join('\n')
                    }
                    onClick={(e) => {
                      // Plain clicks stay in the page (keeping ?testing etc.); modified clicks open a new tab.
                      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                      e.preventDefault();
                      onSelect(s.id);
                    }}
                  >
                    {hide ? s.id : s.title}
                  </a>
                </li>
              );
            })}
          </ul>
        </section>
      ))}
    </nav>
  );
}
