// One hostile input through the page's own wasm module (web/src/sim/pkg, what the page's worker runs), in Node: a
// trace file as the page reads a dropped one (`RecordedTrace` from its bytes, gzip expanded by the core), a
// scenario as the page runs a shared link's (the cost estimate first: past 20 s the page asks, and this says so
// instead of running; else every policy's run). Prints one line, the outcome; exits 1 when the input was refused
// or a run stopped with a message, 0 when it was read or ran.
//
// Usage: node scripts/hostile-page.mjs FILE   (after `npm run build:wasm`; scripts/hostile-inputs.sh calls it)
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  estimate_cost,
  initSync,
  last_panic,
  RecordedTrace,
  run_report,
  start,
} from '../web/src/sim/pkg/schedsim_wasm.js';

const root = fileURLToPath(new URL('..', import.meta.url));
initSync({ module: readFileSync(`${root}web/src/sim/pkg/schedsim_wasm_bg.wasm`) });
start();

/** The page refuses a dropped trace over this size before reading it [bytes]. */
const PAGE_TRACE_MAX = 512 * 1024 * 1024;
/** The page asks before a shared link's run estimated longer than this [s]. */
const COST_ASK_SECONDS = 20;

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/hostile-page.mjs FILE');
  process.exit(2);
}
try {
  if (file.endsWith('.json')) {
    const text = readFileSync(file, 'utf8');
    const cost = JSON.parse(estimate_cost(text, '[]'));
    if (cost.seconds > COST_ASK_SECONDS) {
      console.log(`the page asks first: ${cost.text}`);
      process.exit(1);
    }
    const report = JSON.parse(run_report(text, '[]', true));
    console.log(`ran: ${report.runs.length} run(s)`);
  } else {
    if (!statSync(file).isFile()) throw new Error('the page reads only dropped files');
    if (statSync(file).size > PAGE_TRACE_MAX)
      throw new Error('over the page size limit, refused before reading');
    const trace = new RecordedTrace(readFileSync(file), 'hostile');
    const damage = JSON.parse(trace.report_json()).recorded?.read?.damage;
    console.log(damage ? `read, damage: ${damage.message}` : 'read');
    trace.free();
  }
} catch (e) {
  const panic = last_panic();
  console.log(panic ? `PANIC: ${panic}` : String(e instanceof Error ? e.message : e).split('\n')[0]);
  process.exit(1);
}
