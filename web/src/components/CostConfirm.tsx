// Asks before a shared link's scenario runs when the simulator estimates its runs at more than a few seconds:
// a link must not start an hour of work by itself. Test hook: `cost-confirm`.
import type { CostAsk } from '../app/useScenarioRuns';

export function CostConfirm({ ask }: { readonly ask: CostAsk }) {
  return (
    <div
      className="cost-confirm"
      role="alertdialog"
      aria-labelledby="cost-confirm-title"
      data-testid="cost-confirm"
    >
      <p id="cost-confirm-title">
        <strong>{ask.name}</strong> from this link is a long run: {ask.estimate}. Run it now in this tab?
      </p>
      <p>
        <button type="button" data-testid="cost-run" onClick={() => ask.answer(true)}>
          Run it
        </button>{' '}
        <button type="button" data-testid="cost-cancel" onClick={() => ask.answer(false)} autoFocus>
          Open the default scenario instead
        </button>
      </p>
    </div>
  );
}
