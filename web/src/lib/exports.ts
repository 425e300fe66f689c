// Exports (issue 9): the metrics and the trace window on screen as CSV and JSON, and any view as PNG or SVG.
// The tables are pure functions of the runs (tested beside this file); the images come from the DOM.
import { toPng, toSvg } from 'html-to-image';
import type { Decision } from './decisions';
import type { ClaimResult, Meta, RunReport } from '../sim/types';

/** A CSV field: quoted when it holds a separator, a quote or a line break (RFC 4180). */
export function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  // A leading = + - @ would make a spreadsheet evaluate a scenario's text as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** Every number in a report as [path, value], paths as the claims name them (`domains.web.response_ms.p99`). */
export function flattenReport(report: RunReport): [string, number | boolean][] {
  const out: [string, number | boolean][] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'number' || typeof v === 'boolean') out.push([path, v]);
    else if (typeof v === 'object' && v !== null && !Array.isArray(v))
      for (const [k, c] of Object.entries(v)) walk(c, path ? `${path}.${k}` : k);
  };
  const { policy: _policy, wall_ms: _wall, claims: _claims, ...rest } = report;
  walk(rest, '');
  return out;
}

export interface MetricsRun {
  readonly policy: string;
  readonly label: string;
  readonly report: RunReport;
}

/** The metrics of the runs on screen, long format: one row per policy and metric. */
export function metricsCsv(runs: readonly MetricsRun[]): string {
  const rows = runs.flatMap((r) => flattenReport(r.report).map(([path, v]) => [r.policy, r.label, path, v]));
  return toCsv(['policy', 'label', 'metric', 'value'], rows);
}

export function metricsJson(
  scenario: string | null,
  runs: readonly MetricsRun[],
  claims: readonly ClaimResult[] | null,
): string {
  return (
    JSON.stringify(
      { scenario, runs: runs.map((r) => ({ label: r.label, ...r.report })), claims: claims ?? [] },
      null,
      2,
    ) + '\n'
  );
}

/** One schedule segment: who ran on which pCPU, clipped to the window [ms]. */
export interface TraceSegment {
  readonly pcpu: number;
  readonly start_ms: number;
  readonly end_ms: number;
  readonly vcpu: string;
  readonly domain: string;
  /** "DOMAIN/TASK", or "" when the guest was idle. */
  readonly task: string;
}

/** Segments (rows of 5: pcpu, start_ns, end_ns, vcpu, task) that intersect [fromMs, toMs], clipped to it. */
export function segmentsInWindow(
  flat: Float64Array,
  meta: Meta,
  fromMs: number,
  toMs: number,
): TraceSegment[] {
  const out: TraceSegment[] = [];
  const a = fromMs * 1e6;
  const b = toMs * 1e6;
  for (let i = 0; i + 4 < flat.length; i += 5) {
    const start = flat[i + 1]!;
    const end = flat[i + 2]!;
    if (end < a || start > b) continue;
    const vcpu = meta.vcpus[flat[i + 3]!];
    const task = flat[i + 4]!;
    out.push({
      pcpu: flat[i]!,
      start_ms: Math.max(start, a) / 1e6,
      end_ms: Math.min(end, b) / 1e6,
      vcpu: vcpu?.name ?? String(flat[i + 3]),
      domain: vcpu ? (meta.domains[vcpu.domain]?.name ?? '') : '',
      task: task >= 0 ? (meta.tasks[task]?.path ?? String(task)) : '',
    });
  }
  return out.sort((x, y) => x.start_ms - y.start_ms || x.pcpu - y.pcpu);
}

export interface TraceRun {
  readonly policy: string;
  readonly segments: readonly TraceSegment[];
  readonly decisions: readonly Decision[];
  /** The decision list stopped at its limit. */
  readonly truncated: boolean;
}

export function traceJson(
  scenario: string | null,
  window: readonly [number, number],
  runs: readonly TraceRun[],
) {
  return JSON.stringify({ scenario, window_ms: window, runs }, null, 2) + '\n';
}

/** The trace window as one table: segments and decisions interleaved by time. */
export function traceCsv(runs: readonly TraceRun[]): string {
  const rows: unknown[][] = [];
  for (const r of runs) {
    for (const s of r.segments)
      rows.push([r.policy, 'segment', s.start_ms, s.end_ms, s.pcpu, s.domain, s.vcpu, s.task, '']);
    for (const d of r.decisions)
      rows.push([r.policy, 'decision', d.t_ns / 1e6, '', d.pcpu, '', '', '', d.text]);
  }
  rows.sort((x, y) => (x[0] === y[0] ? (x[2] as number) - (y[2] as number) : 0));
  return toCsv(['policy', 'kind', 'start_ms', 'end_ms', 'pcpu', 'domain', 'vcpu', 'task', 'reason'], rows);
}

/** A file name piece from any text: letters, digits, dashes. */
export function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'schedlab'
  );
}

/** Saves a file through the browser's download. */
export function download(name: string, data: Blob | string, type = 'application/octet-stream'): void {
  const blob = typeof data === 'string' ? new Blob([data], { type }) : data;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Presentation properties copied onto a standalone SVG so it looks as on screen without the page's CSS. */
const SVG_STYLE = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-opacity',
  'stroke-dasharray',
  'opacity',
  'font-family',
  'font-size',
  'font-weight',
  'text-anchor',
  'dominant-baseline',
  'visibility',
] as const;

/** The view's own SVG with computed styles inlined (a vector file), or null when the view is not one SVG. */
function nativeSvg(el: HTMLElement): string | null {
  const svgs = el instanceof SVGSVGElement ? [el] : [...el.querySelectorAll('svg')];
  if (svgs.length !== 1 || el.querySelector('canvas')) return null;
  const src = svgs[0]!;
  const copy = src.cloneNode(true) as SVGSVGElement;
  const from = [src, ...src.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((node, i) => {
    const cs = getComputedStyle(node);
    const style = SVG_STYLE.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';');
    to[i]!.setAttribute('style', style);
  });
  const box = src.getBoundingClientRect();
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  copy.setAttribute('width', String(Math.round(box.width)));
  copy.setAttribute('height', String(Math.round(box.height)));
  const bg = getComputedStyle(document.body).backgroundColor;
  copy.insertAdjacentHTML('afterbegin', `<rect width="100%" height="100%" fill="${bg}"/>`);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy);
}

function background(): string {
  return getComputedStyle(document.body).backgroundColor || '#ffffff';
}

/** Any view as SVG: its own vector SVG when it is one, else the rendered HTML inside an SVG foreignObject. */
export async function viewSvg(el: HTMLElement): Promise<Blob> {
  const own = nativeSvg(el);
  if (own) return new Blob([own], { type: 'image/svg+xml' });
  const url = await toSvg(el, { backgroundColor: background() });
  const text = decodeURIComponent(url.slice(url.indexOf(',') + 1));
  return new Blob(['<?xml version="1.0" encoding="UTF-8"?>\n' + text], { type: 'image/svg+xml' });
}

/** Any view as a PNG at twice the screen's pixel density (sharp on a projector). */
export async function viewPng(el: HTMLElement): Promise<Blob> {
  const url = await toPng(el, { backgroundColor: background(), pixelRatio: 2 });
  return (await fetch(url)).blob();
}
