// Memory bound, measured as a page worker runs it: bench-large stretched to an hour (or HOUR_S seconds)
// in replay mode under Node (`Simulation.withReplay`, a checkpoint every 500 ms, the longest window the worker
// allows recorded as the opening window), then windows of that length focused at three places. Prints the
// module's memory (a wasm memory only grows, so each figure is the peak so far) and the time each step took.
// `npm run build:wasm` first; `node scripts/bench-hour.mjs` (6-12 minutes on this machine kind). `PKG=dir` measures
// another build's package.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
/** The wasm package measured (another build's, to compare). */
const pkg = process.env.PKG ?? `${root}web/src/sim/pkg`;
const { initSync, estimate_cost, Simulation } = await import(`${pkg}/schedsim_wasm.js`);
const wasm = initSync({ module: readFileSync(`${pkg}/schedsim_wasm_bg.wasm`) });

/** As web/src/sim/worker.ts: checkpoint interval [ms] and the most events a window may span. */
const CHECKPOINT_MS = 500;
const WINDOW_EVENTS = 600_000;

const doc = JSON.parse(readFileSync(`${root}scenarios/bench-large.json`, 'utf8'));
doc.duration_ms = Number(process.env.HOUR_S ?? 3600) * 1000;
const text = JSON.stringify(doc);
const policy = doc.policies[0].id;
const cost = JSON.parse(estimate_cost(text, JSON.stringify([policy])));
const capNs = Math.max(
  1e6,
  Math.floor((doc.duration_ms * 1e6 * WINDOW_EVENTS) / Math.max(1, cost.events_per_run)),
);
const mb = () => (wasm.memory.buffer.byteLength / 1e6).toFixed(0);
const secs = (t0) => ((performance.now() - t0) / 1000).toFixed(2);

let t0 = performance.now();
const sim = Simulation.withReplay(text, policy, CHECKPOINT_MS, capNs / 1e6);
while (!sim.step(200_000));
console.log(
  `${doc.id}, ${doc.duration_ms / 1000} s simulated, policy ${policy}: run ${secs(t0)} s, ` +
    `opening window ${(capNs / 1e9).toFixed(2)} s; module memory ${mb()} MB`,
);
for (const at of [0.25, 0.5, 0.9]) {
  const from = Math.floor(doc.duration_ms * 1e6 * at);
  t0 = performance.now();
  sim.focusWindow(from, from + capNs);
  console.log(
    `  window of ${(capNs / 1e9).toFixed(2)} s at ${(from / 1e9).toFixed(0)} s: ${secs(t0)} s; module memory ${mb()} MB`,
  );
}
sim.free();
