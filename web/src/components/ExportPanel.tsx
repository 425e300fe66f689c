// Exports: any view on screen as PNG or SVG, the metrics and the trace window as CSV or JSON. The
// views are found by their test ids (docs/test-hooks.md), so a view added later is exportable without changes here.
import { useState } from 'react';
import type { SimClient } from '../sim/client';
import type { ClaimResult, RunResult } from '../sim/types';
import {
  download,
  metricsCsv,
  metricsJson,
  perfettoTrace,
  PERFETTO_ORIGIN,
  sendToPerfetto,
  segmentsInWindow,
  slug,
  traceCsv,
  traceJson,
  type TraceRun,
} from '../lib/exports';
import {
  EXPORT_SIZES,
  figureToSvg,
  paperLayout,
  nothingToShow,
  svgToPng,
  viewToSvg,
  type ExportSize,
} from '../lib/svgExport';
import { nsWindow } from '../lib/view';

/** Views that can be exported, by test id (per column first, then the page-wide ones). */
const VIEW_IDS = [
  'runqueues',
  'timeline',
  'share-chart',
  'belief-chart',
  'lag-chart',
  'event-log',
  'metrics-table',
  'cdf-chart',
  'comparison-panel',
  'claims-panel',
] as const;

/** A view by its test id. */
function selector(id: string): string {
  return `[data-testid="${id}"]`;
}

/** Most decisions per column in a trace export: a wide window of a busy run can hold millions. */
const MAX_DECISIONS = 100_000;

interface ViewOption {
  readonly key: string;
  readonly label: string;
  readonly find: () => HTMLElement | null;
  /** What the view shows, for the export's caption: the column's policy, or '' for a page-wide view. */
  readonly policy: string;
}

function columnView(i: number, id: string): HTMLElement | null {
  const col = document.querySelectorAll<HTMLElement>('[data-testid="policy-column"]')[i];
  return col?.querySelector<HTMLElement>(selector(id)) ?? null;
}

/** The views on screen now, each with a way to find it again when the button is pressed. */
function viewsOnScreen(): ViewOption[] {
  const out: ViewOption[] = [];
  const columns = [...document.querySelectorAll<HTMLElement>('[data-testid="policy-column"]')];
  columns.forEach((col, i) => {
    // The column as its header names it ("Credit + TAVS, PBratio 0"), not by its id ("tavs~w0").
    const policy =
      col.querySelector('.col-label')?.textContent?.trim() || col.dataset.policy || String(i + 1);
    for (const id of VIEW_IDS) {
      if (!col.querySelector(selector(id))) continue;
      out.push({
        key: `${i}:${id}`,
        label: `${policy}: ${id.replace(/-/g, ' ')}`,
        find: () => columnView(i, id),
        policy,
      });
    }
  });
  for (const id of VIEW_IDS) {
    const el = document.querySelector<HTMLElement>(selector(id));
    if (el && !el.closest('[data-testid="policy-column"]'))
      out.push({
        key: `page:${id}`,
        label: id.replace(/-/g, ' '),
        find: () => document.querySelector<HTMLElement>(selector(id)),
        policy: '',
      });
  }
  return out;
}

/** One button per file format (test ids `PREFIX-FORMAT`). */
function Formats<F extends string>({
  prefix,
  formats,
  disabled,
  onPick,
}: {
  prefix: string;
  formats: readonly F[];
  disabled: boolean;
  onPick: (format: F) => void;
}) {
  return (
    <>
      {formats.map((f) => (
        <button
          key={f}
          type="button"
          data-testid={`${prefix}-${f}`}
          disabled={disabled}
          onClick={() => onPick(f)}
        >
          {f === 'perfetto' ? 'Perfetto JSON' : f === 'open-perfetto' ? 'Open in Perfetto' : f.toUpperCase()}
        </button>
      ))}
    </>
  );
}

export interface ExportRun {
  readonly policy: string;
  readonly label: string;
  readonly run: RunResult;
}

interface Props {
  readonly client: SimClient;
  readonly scenarioId: string | null;
  readonly scenarioName: string;
  readonly runs: readonly ExportRun[];
  readonly claims: readonly ClaimResult[] | null;
  /** The timelines' window on screen [ms]. */
  readonly view: readonly [number, number];
  readonly onError: (message: string) => void;
  readonly onClose: () => void;
}

export function ExportPanel({
  client,
  scenarioId,
  scenarioName,
  runs,
  claims,
  view,
  onError,
  onClose,
}: Props) {
  const [views, setViews] = useState<ViewOption[]>(viewsOnScreen);
  const [chosen, setChosen] = useState(() => views[0]?.key ?? '');
  const [busy, setBusy] = useState(false);
  const [size, setSize] = useState<ExportSize>('2x');
  /** The per-column view a figure puts side by side for every column. */
  const [figureView, setFigureView] = useState<string>('timeline');
  const [notice, setNotice] = useState<string | null>(null);
  const base = slug(scenarioId ?? scenarioName);
  const option = views.find((v) => v.key === chosen) ?? views[0];

  const run = async (what: string, work: () => Promise<void>) => {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      onError(`Export of ${what} failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const image = (format: 'png' | 'svg') =>
    run(`the ${format.toUpperCase()} image`, async () => {
      const el = option?.find();
      if (!el) throw new Error('that view is no longer on screen');
      const empty = nothingToShow(el);
      setNotice(empty);
      if (empty) return;
      const caption = [option!.policy, scenarioName].filter(Boolean).join(' · ');
      // The PNG is the SVG rendered: one drawing of the view, so both files show the same thing.
      const undo = size === 'a4' ? await paperLayout(el) : null;
      let svg: string;
      try {
        svg = viewToSvg(el, caption, size);
      } finally {
        undo?.();
      }
      const blob = format === 'png' ? await svgToPng(svg, 1) : new Blob([svg], { type: 'image/svg+xml' });
      download(`${base}-${slug(option!.label)}.${format}`, blob);
    });

  /** Every column's `figureView` side by side in one SVG, each captioned with its policy. */
  const figure = () =>
    run('the figure', async () => {
      const cols = [...document.querySelectorAll<HTMLElement>('[data-testid="policy-column"]')];
      const views = cols.flatMap((col, i) => {
        const el = col.querySelector<HTMLElement>(selector(figureView));
        if (!el || nothingToShow(el)) return [];
        const policy =
          col.querySelector('.col-label')?.textContent?.trim() || col.dataset.policy || `${i + 1}`;
        return [{ el, caption: policy }];
      });
      if (views.length === 0) {
        setNotice(`No column has a ${figureView.replace(/-/g, ' ')} with something to show.`);
        return;
      }
      setNotice(null);
      const undo = size === 'a4' ? await Promise.all(views.map((v) => paperLayout(v.el))) : [];
      let svg: string;
      try {
        svg = figureToSvg(views, `${scenarioName}: ${figureView.replace(/-/g, ' ')}`, size);
      } finally {
        for (const u of undo) u();
      }
      download(`${base}-figure-${figureView}.svg`, new Blob([svg], { type: 'image/svg+xml' }));
    });

  const metrics = (format: 'csv' | 'json') =>
    run('the metrics', async () => {
      const list = runs.map((r) => ({ policy: r.policy, label: r.label, report: r.run.report }));
      if (format === 'csv') download(`${base}-metrics.csv`, metricsCsv(list), 'text/csv');
      else download(`${base}-metrics.json`, metricsJson(scenarioId, list, claims), 'application/json');
    });

  const trace = (format: 'csv' | 'json' | 'perfetto' | 'open-perfetto') => {
    // Opened by the click itself (a window opened after the queries would be a blocked pop-up).
    const ui = format === 'open-perfetto' ? window.open(PERFETTO_ORIGIN, '_blank') : null;
    return run('the trace window', async () => {
      if (format === 'open-perfetto' && !ui)
        throw new Error(
          'the browser blocked the Perfetto window (allow pop-ups, or download "Perfetto JSON")',
        );
      const [from, to] = view;
      const traced: TraceRun[] = await Promise.all(
        runs.map(async (r) => {
          const window = nsWindow(from, to);
          const decisions = await client.query(r.run.runId, 'decisionsBetween', window, MAX_DECISIONS);
          // The run replays the exported window (up to its longest window, which then cuts the export short).
          const held = await client.query(r.run.runId, 'lanes', window);
          return {
            policy: r.policy,
            segments: segmentsInWindow(held.lanes, r.run.meta, from, to),
            decisions,
            truncated: decisions.length >= MAX_DECISIONS || held.window.to_ns < window.to_ns,
          };
        }),
      );
      const name = `${base}-trace-${Math.round(from)}-${Math.round(to)}ms`;
      if (format === 'perfetto' || format === 'open-perfetto') {
        const wakeups = await Promise.all(
          runs.map(async (r) => {
            // Deliveries up to the window's end whose wait overlaps it (a wait may start long before).
            const recs = await client.query(r.run.runId, 'ioEvents', nsWindow(from, to), MAX_DECISIONS);
            return recs
              .filter((rec) => rec.phase === 'delivered')
              .map((rec) => ({
                t_ms: rec.t_ns / 1e6,
                wait_ms: rec.wait_ns / 1e6,
                vcpu: r.run.meta.vcpus[rec.vcpu]?.name ?? String(rec.vcpu),
                kind: rec.kind,
              }));
          }),
        );
        const trace = perfettoTrace(
          scenarioId,
          view,
          runs.map((r, k) => ({
            policy: r.policy,
            label: r.label,
            pcpus: r.run.meta.pcpus,
            segments: traced[k]!.segments,
            wakeups: wakeups[k]!,
          })),
        );
        const text = JSON.stringify(trace) + '\n';
        if (ui) {
          const bytes = new TextEncoder().encode(text);
          await sendToPerfetto(ui, bytes.buffer, `${scenarioName} ${Math.round(from)}-${Math.round(to)} ms`);
        } else download(`${name}.perfetto.json`, text, 'application/json');
        return;
      }
      if (format === 'csv') download(`${name}.csv`, traceCsv(traced), 'text/csv');
      else download(`${name}.json`, traceJson(scenarioId, view, traced), 'application/json');
    });
  };

  const none = runs.length === 0;
  return (
    <section className="export-panel" data-testid="export-panel" aria-label="Export">
      <h2>Export</h2>
      <div className="row">
        <label htmlFor="export-view">View</label>
        <select
          id="export-view"
          data-testid="export-view"
          value={option?.key ?? ''}
          onFocus={() => setViews(viewsOnScreen())}
          onChange={(e) => setChosen(e.target.value)}
        >
          {views.map((v) => (
            <option key={v.key} value={v.key}>
              {v.label}
            </option>
          ))}
        </select>
        <Formats
          prefix="export"
          formats={['png', 'svg']}
          disabled={busy || !option}
          onPick={(f) => void image(f)}
        />
        <label htmlFor="export-size">Size</label>
        <select
          id="export-size"
          data-testid="export-size"
          value={size}
          onChange={(e) => setSize(e.target.value as ExportSize)}
        >
          {(Object.keys(EXPORT_SIZES) as ExportSize[]).map((k) => (
            <option key={k} value={k}>
              {EXPORT_SIZES[k].label}
            </option>
          ))}
        </select>
      </div>
      <div className="row">
        <label htmlFor="export-figure-view">Figure: every column’s</label>
        <select
          id="export-figure-view"
          data-testid="export-figure-view"
          value={figureView}
          onChange={(e) => setFigureView(e.target.value)}
        >
          {VIEW_IDS.filter((id) =>
            document.querySelector(`[data-testid="policy-column"] ${selector(id)}`),
          ).map((id) => (
            <option key={id} value={id}>
              {id.replace(/-/g, ' ')}
            </option>
          ))}
        </select>
        <button type="button" data-testid="export-figure" disabled={busy} onClick={() => void figure()}>
          Figure SVG
        </button>
      </div>
      {notice && (
        <p className="notice" role="status" data-testid="export-notice">
          {notice}
        </p>
      )}
      <div className="row">
        <span>Metrics of the columns shown</span>
        <Formats
          prefix="export-metrics"
          formats={['csv', 'json']}
          disabled={busy || none}
          onPick={(f) => void metrics(f)}
        />
      </div>
      <div className="row">
        <span>
          Trace of the window on screen ({view[0].toFixed(1)}–{view[1].toFixed(1)} ms)
        </span>
        <Formats
          prefix="export-trace"
          formats={['csv', 'json', 'perfetto', 'open-perfetto']}
          disabled={busy || none}
          onPick={(f) => void trace(f)}
        />
      </div>
      <button type="button" className="close" onClick={onClose} aria-label="Close the export panel">
        Close
      </button>
    </section>
  );
}
