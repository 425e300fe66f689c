import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { ErrorBanner } from './components/ErrorBanner';
import { ErrorBoundary } from './components/ErrorBoundary';
import { prewarm } from './sim/client';
import { parseShareUrl } from './lib/share';
import { linkWithLesson } from './lib/lessons';
import { loadIndex, prefetchScenario } from './lib/scenarios';
import './styles.css';

// Cold start: before the first render, the simulator's wasm starts downloading and compiling, its workers starting
// (a run worker per column the link names), and the library's index and the linked scenario loading (the page asks
// for them again once rendered and gets the loaded modules; it reports any failure itself).
const link = linkWithLesson(parseShareUrl(window.location.search, window.location.hash));
prewarm(link.policies?.length ?? 0);
loadIndex().catch(() => {});
if (link.scenario?.kind === 'library') prefetchScenario(link.scenario.id);

// Set before the first render so a test never sees a stale "idle" from before the runs started.
if (/[?&]testing=(1|true)(&|$)/.test(window.location.search)) window.__schedlabIdle = false;

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <ErrorBoundary
        fallback={(error) => (
          <div className="app">
            <ErrorBanner messages={[`schedlab hit an unexpected error: ${error.message}`]}>
              <a href="./">Reload the page</a>
            </ErrorBanner>
          </div>
        )}
      >
        <App />
      </ErrorBoundary>
    </StrictMode>,
  );
}

// Offline use (issue 9): the service worker caches the built files; relative, so a subpath deploy works too.
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('./sw.js').catch(() => {
      // Not fatal: the page works online without it (file:// or a host that refuses it).
    });
  });
}
