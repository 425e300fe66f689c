// Paper 001 Corollary 1 across a sweep: runs `schedsim sweep` over the job domain's weight and vCPU count (and
// the allocation interval L = 1 or 10 slots) of scenarios/p001-cor1-lag-makespan.json, pairs each PS run with the
// CPS run of the same combination and seed, and plots CPS's speed-up over PS (makespan_PS / makespan_CPS, taken
// as steps done in the same time) against 2 max(|Lag|, 1) of the PS run. Writes docs/figures/cor1-lag-makespan.svg and
// prints the points as CSV. Usage: node scripts/plot-cor1.mjs [--seeds N]   (needs `npm run build:cli` first)
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaleLinear } from 'd3-scale';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'sim-wasm/target/release/schedsim');
const scenario = join(root, 'scenarios/p001-cor1-lag-makespan.json');
const out = join(root, 'docs/figures/cor1-lag-makespan.svg');
const seedsArg = process.argv.indexOf('--seeds');
// The barrier job draws nothing at random, so one seed per combination is the default.
const seeds = seedsArg > 0 ? Number(process.argv[seedsArg + 1]) : 1;
const STEPS = 'jobs.job/steps.phases_done';
const LAG = 'domains.job.max_abs_lag_ms';
// The hybrid scheduler's slot: |Lag| in the paper is counted in slots (one phase per slot).
const SLOT_MS = 10;

/** One sweep of a PS/CPS policy pair; returns [{weight, vcpus, L, seed, ratio, bound}]. */
function sweep(ps, cps, L) {
  const json = execFileSync(
    cli,
    [
      'sweep',
      scenario,
      '--set',
      'domains.job.weight=1,2,3,4,6,8',
      '--set',
      'domains.job.vcpus=2,3,4',
      '--seeds',
      String(seeds),
      '--policy',
      ps,
      '--policy',
      cps,
      '--metric',
      STEPS,
      '--metric',
      LAG,
      '--format',
      'json',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const rows = JSON.parse(json).rows;
  const key = (r) => `${r.combination}/${r.seed}`;
  const psRuns = new Map(rows.filter((r) => r.policy === ps).map((r) => [key(r), r]));
  return rows
    .filter((r) => r.policy === cps)
    .map((c) => {
      const p = psRuns.get(key(c));
      return {
        weight: c.set['domains.job.weight'],
        vcpus: c.set['domains.job.vcpus'],
        L,
        seed: c.seed,
        ratio: c.metrics[STEPS] / p.metrics[STEPS],
        // Lemma 1: an ideal PS deviates by one slot, so the bound uses at least |Lag| = 1.
        bound: 2 * Math.max(1, p.metrics[LAG] / SLOT_MS),
      };
    });
}

/** Spearman's rank correlation (ties get their mean rank). */
function spearman(xs, ys) {
  const rank = (v) => {
    const order = v.map((x, i) => [x, i]).sort((a, b) => a[0] - b[0]);
    const r = new Array(v.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
      for (let k = i; k <= j; k++) r[order[k][1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const [rx, ry] = [rank(xs), rank(ys)];
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  const [mx, my] = [mean(rx), mean(ry)];
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < rx.length; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) ** 2;
    syy += (ry[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

const points = [...sweep('ps', 'cps', 1), ...sweep('ps-L10', 'cps-L10', 10)];
const under = points.filter((p) => p.ratio <= p.bound).length;
const rho = spearman(
  points.map((p) => p.bound),
  points.map((p) => p.ratio),
);

const [W, H, M] = [640, 420, { top: 48, right: 24, bottom: 52, left: 60 }];
const maxX = Math.max(...points.map((p) => p.bound)) * 1.05;
const maxY = Math.max(2, ...points.map((p) => p.ratio)) * 1.1;
const x = scaleLinear()
  .domain([0, maxX])
  .range([M.left, W - M.right])
  .nice();
const y = scaleLinear()
  .domain([0, maxY])
  .range([H - M.bottom, M.top])
  .nice();
const colour = { 1: '#0072B2', 10: '#D55E00' };
const f = (v) => v.toFixed(1);
const ticks = (s, axis) =>
  s
    .ticks(6)
    .map((t) =>
      axis === 'x'
        ? `<line x1="${f(s(t))}" x2="${f(s(t))}" y1="${H - M.bottom}" y2="${H - M.bottom + 5}" stroke="#333"/>` +
          `<text x="${f(s(t))}" y="${H - M.bottom + 18}" text-anchor="middle">${t}</text>`
        : `<line x1="${M.left - 5}" x2="${M.left}" y1="${f(s(t))}" y2="${f(s(t))}" stroke="#333"/>` +
          `<text x="${M.left - 8}" y="${f(s(t)) + 4}" text-anchor="end">${t}</text>`,
    )
    .join('');
const top = Math.min(x.domain()[1], y.domain()[1]);
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">
<title>Paper 001 Corollary 1: CPS speed-up over PS against 2 max(|Lag|, 1)</title>
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${M.left}" y="20" font-size="14" font-weight="bold">Corollary 1: makespan_PS / makespan_CPS against 2 max(|Lag|, 1) (${points.length} runs)</text>
<text x="${M.left}" y="36" fill="#444">${under} of ${points.length} at or under the bound y = x; Spearman rho ${rho.toFixed(2)}</text>
<line x1="${x(0)}" y1="${y(0)}" x2="${f(x(top))}" y2="${f(y(top))}" stroke="#999" stroke-dasharray="5 4"/>
<text x="${f(x(top * 0.8)) + 6}" y="${f(y(top * 0.8))}" fill="#666">y = x (the corollary)</text>
<line x1="${M.left}" x2="${W - M.right}" y1="${f(y(1))}" y2="${f(y(1))}" stroke="#ccc"/>
<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>
<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#333"/>
${ticks(x, 'x')}${ticks(y, 'y')}
<text x="${(M.left + W - M.right) / 2}" y="${H - 12}" text-anchor="middle">2 max(|Lag|, 1) of the PS run (|Lag| in ${SLOT_MS} ms slots)</text>
<text transform="translate(16 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">CPS speed-up over PS</text>
${points
  .map(
    (p) =>
      `<circle cx="${f(x(p.bound))}" cy="${f(y(p.ratio))}" r="${2 + p.vcpus}" fill="${colour[p.L]}" fill-opacity="0.55"><title>weight ${p.weight}, ${p.vcpus} vCPUs, L ${p.L}, seed ${p.seed}: ${p.ratio.toFixed(2)} vs ${p.bound.toFixed(2)}</title></circle>`,
  )
  .join('\n')}
<g transform="translate(${W - M.right - 150} ${M.top + 8})">
<circle cx="6" cy="0" r="5" fill="${colour[1]}"/><text x="16" y="4">L = 1 slot</text>
<circle cx="6" cy="18" r="5" fill="${colour[10]}"/><text x="16" y="22">L = 10 slots</text>
<text x="0" y="40" fill="#444">dot size: job vCPUs (2-4)</text>
</g>
</svg>
`;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, svg);
console.log('weight,vcpus,L,seed,ratio,two_lag');
for (const p of points)
  console.log([p.weight, p.vcpus, p.L, p.seed, p.ratio.toFixed(3), p.bound.toFixed(3)].join(','));
console.error(`${under}/${points.length} under the bound; Spearman rho ${rho.toFixed(2)}; wrote ${out}`);
