// `npm run bench`, the simulator's part: one invocation measures the native engine against the floor
// (a bare binary-heap event loop, in `schedsim bench`), the WebAssembly build against native, and replay mode
// (checkpoints, then a 1 s window's detail replayed) against an untraced run, and prints them as ratios of CPU
// time (this process's `process.cpuUsage()`, the CLI's thread CPU clock), median and range of three rounds that
// alternate the native and the wasm runs, with the load average beside. Needs `npm run build:wasm` first
// (`npm run bench` builds); the native figures come from `schedsim bench --json`, built and run through cargo
// (honouring CARGO_TARGET_DIR), whose rows it prints first.
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

/** Rounds: each runs the native bench of LARGE and then the wasm runs, so the two alternate. */
const ROUNDS = 3;

/** `schedsim bench FILES --json` (built and run through cargo, honouring CARGO_TARGET_DIR): its rows. */
function nativeBench(files, rounds) {
  const out = execFileSync(
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
      ...files,
      '--json',
      '--rounds',
      String(rounds),
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 },
  );
  return JSON.parse(out);
}

/** CPU seconds (user + system) this process has used so far: the clock the machine's other load does not move. */
function cpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Wall and CPU seconds `work` takes. */
function timed(work) {
  const [w0, c0] = [performance.now(), cpuSeconds()];
  work();
  return { wall: (performance.now() - w0) / 1000, cpu: Math.max(cpuSeconds() - c0, 1e-9) };
}

/** min / median / max of a list of numbers. */
function spread(xs) {
  const v = [...xs].sort((a, b) => a - b);
  return { min: v[0], median: v[Math.floor(v.length / 2)], max: v[v.length - 1] };
}

const others = nativeBench(
  FILES.filter((f) => f !== LARGE),
  ROUNDS,
);
process.stdout.write(`${JSON.stringify(others, null, 2)}\n`);
const text = readFileSync(`${root}${LARGE}`, 'utf8');
const doc = JSON.parse(text);
const end = doc.duration_ms * 1e6;
const from = Math.min(end / 2 + (CHECKPOINT_MS * 1e6) / 2, end - FOCUS_NS);

const rounds = [];
for (let i = 0; i < ROUNDS; i++) {
  const [large] = nativeBench([LARGE], 1);
  // Untraced, every policy, as `schedsim bench`'s batch runs. The first call of the first round includes V8's
  // tiering (the module runs in its baseline compiler until the optimised code is ready): that is the cold figure;
  // the second call of each round is warm.
  const batch = timed(() => run_report(text, '[]', true));
  const warm = timed(() => run_report(text, '[]', true));
  let replay = 0;
  let focus = 0;
  for (const p of doc.policies) {
    let sim;
    replay += timed(() => {
      sim = Simulation.withReplay(text, p.id, CHECKPOINT_MS, 0);
      while (!sim.step(1_000_000)) {
        // runs to the end
      }
    }).cpu;
    focus += timed(() => {
      if (!sim.focusWindow(from, from + FOCUS_NS)) throw new Error('focusWindow held no detail');
    }).cpu;
    sim.free();
  }
  rounds.push({ large, batch, warm, replay, focus });
}
process.stdout.write(`${JSON.stringify(rounds[0].large, null, 2)}\n`);

const scripted = others.find((r) => r.scenario === SCRIPTED);
const of = (f) => spread(rounds.map(f));
const rows = [
  ['native untraced / floor (speed)', of((r) => r.large.batch_vs_floor)],
  [
    'wasm / native, untraced, cold (speed)',
    spread([rounds[0].large.batch_cpu_seconds / rounds[0].batch.cpu]),
  ],
  ['wasm / native, untraced, warm (speed)', of((r) => r.large.batch_cpu_seconds / r.warm.cpu)],
  ['native replay run / untraced run (time)', of((r) => r.large.replay_run_slowdown)],
  ['wasm replay run / untraced run (time)', of((r) => r.replay / r.warm.cpu)],
  ['native focus on 1 s of the run / untraced run (time)', of((r) => r.large.focus_vs_batch)],
  ['wasm focus on 1 s of the run / untraced run (time)', of((r) => r.focus / r.warm.cpu)],
  ['Xen-like timers / lockstep, native (time)', of((r) => r.large.timing_slowdown)],
];
if (scripted?.ratios.script_vs_credit) {
  rows.push([`fair-share script / native Credit on ${SCRIPTED} (time)`, scripted.ratios.script_vs_credit]);
}
const [l1, l5, l15] = rounds[0].large.load_average;
console.log(
  `\n${doc.id} (${doc.duration_ms / 1000} s simulated), ratios by CPU time, median (min-max) of ${ROUNDS} ` +
    `alternated rounds in this invocation, load average ${l1.toFixed(2)} ${l5.toFixed(2)} ${l15.toFixed(2)}:`,
);
const f3 = (x) => x.toFixed(3);
for (const [name, s] of rows) {
  console.log(`  ${name.padEnd(64)} ${f3(s.median)} (${f3(s.min)}-${f3(s.max)})`);
}
const r0 = rounds[0];
console.log(
  `  (CPU seconds: native untraced ${r0.large.batch_cpu_seconds.toFixed(2)}, wasm untraced cold ` +
    `${r0.batch.cpu.toFixed(2)}, warm ${r0.warm.cpu.toFixed(2)}, wasm focus ${r0.focus.toFixed(3)}; ` +
    `${r0.large.checkpoints} checkpoints, ${(r0.large.checkpoint_bytes / 2 ** 20).toFixed(1)} MB)`,
);
