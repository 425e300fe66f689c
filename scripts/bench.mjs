// `npm run bench`, the simulator's part: one invocation measures the native engine against the floor
// (a bare binary-heap event loop, in `schedsim bench`), the WebAssembly build against native, and replay mode
// (checkpoints, then a 1 s window's detail replayed) against an untraced run, and prints them as ratios. Needs
// `npm run build:wasm` first (`npm run bench` builds); the native figures come from `schedsim bench --json`, built
// and run through cargo (honouring CARGO_TARGET_DIR), whose rows it prints first as before.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = `${root}web/src/sim/pkg`;
const { initSync, run_report, Simulation } = await import(`${pkg}/schedsim_wasm.js`);
initSync({ module: readFileSync(`${pkg}/schedsim_wasm_bg.wasm`) });

const FILES = [
  'scenarios/bench-small.json',
  'scenarios/bench-large.json',
  'scenarios/p000-fig10-partial-boost.json',
];
/** The scenario the script scheduler's cost is taken on (a paper's host; `schedsim bench` skips large ones). */
const SCRIPTED = 'p000-fig10-partial-boost';
/** The scenario the ratios are taken on. */
const LARGE = 'scenarios/bench-large.json';
/** Checkpoint interval and focused window, as in `schedsim bench` [ms]. */
const CHECKPOINT_MS = 1000;
const FOCUS_NS = 1e9;

const native = execFileSync(
  'cargo',
  [
    'run',
    '--manifest-path',
    'sim-wasm/Cargo.toml',
    '--release',
    '-q',
    '-p',
    'schedsim-cli',
    '--',
    'bench',
    ...FILES,
    '--json',
  ],
  { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 },
);
process.stdout.write(native);
const text = readFileSync(`${root}${LARGE}`, 'utf8');
const doc = JSON.parse(text);
const large = JSON.parse(native).find((r) => r.scenario === doc.id);
const nativeBatchS = large.sim_seconds / large.batch_sim_seconds_per_wall_second;

/** Wall seconds `work` takes. */
function timed(work) {
  const t0 = performance.now();
  work();
  return (performance.now() - t0) / 1000;
}

// Untraced, every policy, as `schedsim bench`'s batch runs. The first call includes V8's tiering (the module runs
// in its baseline compiler until the optimised code is ready), so the batch is timed again, warm.
const wasmBatchS = timed(() => run_report(text, '[]', true));
const wasmWarmS = timed(() => run_report(text, '[]', true));
let wasmReplayS = 0;
let wasmFocusS = 0;
const end = doc.duration_ms * 1e6;
const from = Math.min(end / 2 + (CHECKPOINT_MS * 1e6) / 2, end - FOCUS_NS);
for (const p of doc.policies) {
  let sim;
  wasmReplayS += timed(() => {
    sim = Simulation.withReplay(text, p.id, CHECKPOINT_MS, 0);
    while (!sim.step(1_000_000)) {
      // runs to the end
    }
  });
  wasmFocusS += timed(() => {
    if (!sim.focusWindow(from, from + FOCUS_NS)) throw new Error('focusWindow held no detail');
  });
  sim.free();
}

const scripted = JSON.parse(native).find((r) => r.scenario === SCRIPTED);
const rows = [
  ['native untraced / floor (events per second)', large.batch_vs_floor],
  ['wasm / native, untraced (speed)', nativeBatchS / wasmBatchS],
  ['wasm / native, untraced, warm (a second run; speed)', nativeBatchS / wasmWarmS],
  ['native replay run / untraced run (time)', large.replay_run_slowdown],
  ['wasm replay run / untraced run (time)', wasmReplayS / wasmBatchS],
  ['native focus on 1 s of the run / untraced run (time)', large.focus_vs_batch],
  ['wasm focus on 1 s of the run / untraced run (time)', wasmFocusS / wasmBatchS],
];
console.log(`\n${doc.id} (${doc.duration_ms / 1000} s simulated), ratios from this run:`);
for (const [name, value] of rows) console.log(`  ${name.padEnd(56)} ${value.toFixed(3)}`);
console.log(
  `  ${'fair-share script / native Credit on ' + SCRIPTED + ' (time)'} ${scripted.script_vs_credit.toFixed(1)}`,
);
console.log(
  `  (native untraced ${nativeBatchS.toFixed(2)} s, floor ${(large.events / large.floor_events_per_second).toFixed(2)} s, ` +
    `wasm untraced ${wasmBatchS.toFixed(2)} s (warm ${wasmWarmS.toFixed(2)} s), wasm focus ${wasmFocusS.toFixed(3)} s; ` +
    `${large.checkpoints} checkpoints, ${(large.checkpoint_bytes / 2 ** 20).toFixed(1)} MB)`,
);
