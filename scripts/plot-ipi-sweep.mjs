// IPI-aware directed yield across the number of VMs: builds 1 to 4 VMs of 16 vCPUs on the 16-pCPU host of
// scenarios/kvm-ipi-aware-yield.json (each VM a copy of vm0 with its shootdown threads moved to other vCPUs, as
// vm1 is), runs plain and IPI-aware directed yield, and plots the IPI-aware yield's gain in shootdowns per second
// (summed over the VMs) beside the patch series' dedup figures. Writes docs/figures/ipi-aware-yield-sweep.svg and
// prints the points as CSV. Usage: node scripts/plot-ipi-sweep.mjs   (needs `npm run build:cli` first; SCHEDSIM
// names another binary)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaleLinear } from 'd3-scale';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = process.env.SCHEDSIM ?? join(root, 'sim-wasm/target/release/schedsim');
const base = JSON.parse(readFileSync(join(root, 'scenarios/kvm-ipi-aware-yield.json'), 'utf8'));
const out = join(root, 'docs/figures/ipi-aware-yield-sweep.svg');
// Wanpeng Li, [PATCH v2 8/9], dedup (simlarge) throughput gain at 2, 3 and 4 VMs [%].
const PAPER = { 2: 47.1, 3: 28.1, 4: 1.7 };

/** VM `i`: vm0 with its shootdown threads moved `i` vCPUs on. */
function vm(i) {
  const d = structuredClone(base.domains[0]);
  d.name = `vm${i}`;
  for (const t of d.tasks) if (t.vcpu !== undefined) t.vcpu = (t.vcpu + i) % d.vcpus;
  return d;
}

const dir = mkdtempSync(join(tmpdir(), 'ipi-sweep-'));
const sum = (run, key) => Object.values(run.domains).reduce((a, d) => a + (d[key] ?? 0), 0);
const points = [];
for (let n = 1; n <= 4; n++) {
  const file = join(dir, `vms${n}.json`);
  writeFileSync(
    file,
    JSON.stringify({ ...base, id: `${base.id}-${n}`, domains: [...Array(n).keys()].map(vm) }),
  );
  const report = JSON.parse(
    execFileSync(cli, ['run', file, '--deterministic'], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
  const by = Object.fromEntries(report.runs.map((r) => [r.policy, r]));
  const [p, q] = [by.plain, by.ipi_aware];
  points.push({
    vms: n,
    plain: sum(p, 'shootdowns_per_s'),
    ipi: sum(q, 'shootdowns_per_s'),
    gain: (100 * (sum(q, 'shootdowns_per_s') - sum(p, 'shootdowns_per_s'))) / sum(p, 'shootdowns_per_s'),
    lockGain:
      (100 * (sum(q, 'lock_acquisitions_per_s') - sum(p, 'lock_acquisitions_per_s'))) /
      sum(p, 'lock_acquisitions_per_s'),
  });
}

const [W, H, M] = [640, 400, { top: 56, right: 24, bottom: 52, left: 60 }];
const vals = [...points.flatMap((p) => [p.gain, p.lockGain]), ...Object.values(PAPER), 0];
const x = scaleLinear()
  .domain([0.5, 4.5])
  .range([M.left, W - M.right]);
const y = scaleLinear()
  .domain([Math.min(...vals) - 5, Math.max(...vals) + 5])
  .range([H - M.bottom, M.top])
  .nice();
const f = (v) => v.toFixed(1);
const line = (pts, colour, dash = '') =>
  `<polyline fill="none" stroke="${colour}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''} points="${pts
    .map(([a, b]) => `${f(x(a))},${f(y(b))}`)
    .join(' ')}"/>` +
  pts
    .map(
      ([a, b]) =>
        `<circle cx="${f(x(a))}" cy="${f(y(b))}" r="4" fill="${colour}"><title>${a} VMs: ${b.toFixed(1)}%</title></circle>`,
    )
    .join('');
const yTicks = y
  .ticks(6)
  .map(
    (t) =>
      `<line x1="${M.left - 5}" x2="${W - M.right}" y1="${f(y(t))}" y2="${f(y(t))}" stroke="${t === 0 ? '#333' : '#eee'}"/>` +
      `<text x="${M.left - 8}" y="${f(y(t)) + 4}" text-anchor="end">${t}</text>`,
  )
  .join('');
const xTicks = [1, 2, 3, 4]
  .map((n) => `<text x="${f(x(n))}" y="${H - M.bottom + 18}" text-anchor="middle">${n}</text>`)
  .join('');
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">
<title>IPI-aware directed yield: gain over plain directed yield against the number of 16-vCPU VMs on 16 pCPUs</title>
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${M.left}" y="20" font-size="14" font-weight="bold">IPI-aware yield's gain over plain directed yield, 16-vCPU VMs on 16 pCPUs</text>
<text x="${M.left}" y="38" fill="#444">model: shootdowns/s and lock acquisitions/s summed over the VMs; paper: dedup throughput (patch 8/9)</text>
${yTicks}${xTicks}
<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#333"/>
${line(
  Object.entries(PAPER).map(([n, v]) => [Number(n), v]),
  '#999',
  '5 4',
)}
${line(
  points.map((p) => [p.vms, p.gain]),
  '#0072B2',
)}
${line(
  points.map((p) => [p.vms, p.lockGain]),
  '#D55E00',
)}
<text x="${(M.left + W - M.right) / 2}" y="${H - 12}" text-anchor="middle">VMs on the host</text>
<text transform="translate(16 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">gain [%]</text>
<g transform="translate(${W - M.right - 220} ${M.top + 8})">
<line x1="0" x2="18" y1="0" y2="0" stroke="#0072B2" stroke-width="2"/><text x="24" y="4">model: shootdowns/s</text>
<line x1="0" x2="18" y1="18" y2="18" stroke="#D55E00" stroke-width="2"/><text x="24" y="22">model: lock acquisitions/s</text>
<line x1="0" x2="18" y1="36" y2="36" stroke="#999" stroke-width="2" stroke-dasharray="5 4"/><text x="24" y="40">paper: dedup throughput</text>
</g>
</svg>
`;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, svg);
console.log('vms,plain_shootdowns_per_s,ipi_aware_shootdowns_per_s,gain_pct,lock_gain_pct,paper_pct');
for (const p of points)
  console.log(
    [
      p.vms,
      p.plain.toFixed(1),
      p.ipi.toFixed(1),
      p.gain.toFixed(1),
      p.lockGain.toFixed(1),
      PAPER[p.vms] ?? '',
    ].join(','),
  );
console.error(`wrote ${out}`);
