// The decisions around the playhead with their one-line reasons; the one in force at the playhead is
// highlighted, and clicking an entry moves the playhead to it.
import { useCallback, useEffect, useMemo, useRef } from 'react';
import type { SimClient } from '../sim/client';
import type { RunResult } from '../sim/types';
import { splitValues, toNs } from '../lib/decisions';
import { PLAYING_REFRESH_MS, useLatestQuery } from '../lib/useLatestQuery';
import { selectTime, usePlayhead, type Playhead } from '../lib/playhead';
import { useVisible } from '../lib/useVisible';
import { useDetailWindow } from '../app/useDetailWindow';

/** Decisions shown before (including the current one) and after the playhead. */
export const LOG_BEFORE = 13;
export const LOG_AFTER = 12;

interface Props {
  readonly client: SimClient;
  readonly run: RunResult;
  readonly playhead: Playhead;
  readonly onSeek: (timeMs: number) => void;
}

/** Decision time: ms with microsecond precision, so decisions a few µs apart read differently. */
function stamp(tNs: number): string {
  return (tNs / 1e6).toFixed(3);
}

export function EventLog({ client, run, playhead, onSeek }: Props) {
  const listRef = useRef<HTMLOListElement>(null);
  const sectionRef = useRef<HTMLElement>(null);
  // Nobody reads a log that changes 60 times a second: a few updates a second while playing, none off screen.
  const visible = useVisible(sectionRef);
  const tNs = toNs(usePlayhead(playhead, selectTime, { playingMs: PLAYING_REFRESH_MS, visible }));
  const { runId } = run;
  const detail = useDetailWindow(playhead, run, 'playhead', { playingMs: PLAYING_REFRESH_MS, visible });
  const query = useCallback(
    () => client.query(runId, 'decisionsAround', detail, tNs, LOG_BEFORE, LOG_AFTER),
    [client, runId, detail, tNs],
  );
  const { value, error } = useLatestQuery(query);
  const items = useMemo(() => value?.items ?? [], [value]);
  const current = value?.current ?? -1;

  // Keep the current entry in view inside the list (never scroll the page).
  useEffect(() => {
    const list = listRef.current;
    const el = current >= 0 ? (list?.children[current] as HTMLElement | undefined) : undefined;
    if (!list || !el) return;
    // The list is positioned, so it is the entry's offsetParent.
    const top = el.offsetTop;
    if (top < list.scrollTop || top + el.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = Math.max(0, top - list.clientHeight / 2 + el.offsetHeight / 2);
  }, [current, items]);

  return (
    <section
      ref={sectionRef}
      className="event-log"
      data-testid="event-log"
      data-view="event-log"
      aria-label="Scheduling decisions near the playhead"
    >
      <h3>Decisions near the playhead</h3>
      {error ? (
        <p className="muted">Unavailable: {error}</p>
      ) : items.length === 0 ? (
        <p className="muted">{value ? 'No decisions recorded.' : 'Loading…'}</p>
      ) : (
        <ol ref={listRef}>
          {items.map((d, i) => (
            <li
              key={`${d.t_ns}-${d.pcpu}-${i}`}
              className={i === current ? 'current' : i > current ? 'later' : undefined}
              aria-current={i === current ? 'true' : undefined}
            >
              <button
                type="button"
                data-testid="event-log-entry"
                data-t-ns={d.t_ns}
                onClick={() => onSeek(d.t_ns / 1e6)}
                title="Move the playhead here"
              >
                <span className="ev-time">{stamp(d.t_ns)}</span>
                <span className="ev-pcpu">P{d.pcpu}</span>
                <span className="ev-text">
                  {/* Its values apart: a lesson's predict step hides them (styles.css, .app.concealed). */}
                  {splitValues(d.text).map((p, k) =>
                    p.value ? (
                      <span key={k} className="ev-value" data-testid="event-log-value">
                        {p.text}
                      </span>
                    ) : (
                      p.text
                    ),
                  )}
                </span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
