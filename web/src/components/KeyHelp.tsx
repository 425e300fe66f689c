// The help overlay (key ?): every key the page answers and what it does, from the list the key handler follows.
import { useEffect, useRef } from 'react';
import { KEYS } from '../app/useShortcuts';

export function KeyHelp({ onClose }: { readonly onClose: () => void }) {
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="key-help-title">
      <section className="overlay-box" data-testid="key-help">
        <h2 id="key-help-title">Keys</h2>
        <p className="muted">They work whatever has focus, except while you type in a field.</p>
        <table>
          <tbody>
            {KEYS.map((k) => (
              <tr key={k.keys}>
                <th scope="row">
                  <kbd>{k.keys}</kbd>
                </th>
                <td>{k.does}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="button" ref={ref} data-testid="key-help-close" onClick={onClose}>
          Close
        </button>
      </section>
    </div>
  );
}
