import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { ErrorBanner } from './components/ErrorBanner';
import { ErrorBoundary } from './components/ErrorBoundary';
import { simulatorModule } from './sim/client';
import './styles.css';

// The simulator's wasm starts downloading and compiling before the first render (cold start).
void simulatorModule();

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

// Offline use: the service worker caches the built files; relative, so a subpath deploy works too.
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('./sw.js').catch(() => {
      // Not fatal: the page works online without it (file:// or a host that refuses it).
    });
  });
}
