import { useEffect, useRef, type ReactNode } from 'react';
import { splitProblems } from '../lib/format';

interface Props {
  readonly messages: readonly string[];
  readonly onDismiss?: () => void;
  readonly children?: ReactNode;
}

/** The one place errors are shown (test hook `error-banner`). Renders nothing when there is nothing to say. */
export function ErrorBanner({ messages, onDismiss, children }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const count = messages.length;

  // A message caused by a control far down the page must not land off-screen.
  useEffect(() => {
    if (count > 0) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [count]);

  if (count === 0) return null;
  return (
    <div className="error-banner" role="alert" data-testid="error-banner" ref={ref}>
      <ul>
        {messages.map((m, i) => {
          const { head, items } = splitProblems(m);
          return (
            <li key={i}>
              {head}
              {items.length > 0 && (
                <ul>
                  {items.map((item, k) => (
                    <li key={k}>{item}</li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
      {children}
      {onDismiss && (
        <button type="button" className="dismiss" onClick={onDismiss} aria-label="Dismiss the messages">
          ×
        </button>
      )}
    </div>
  );
}
