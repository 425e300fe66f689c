// The recorded traces on the page, one row each: "Simulate this load" (the scenario fitted to the trace, run under
// KVM, Credit and Credit2 as the page's columns beside the recording, and a table of how far each policy's per-domain
// CPU shares and wake-to-run latencies are from the recorded ones), and the mapping of threads to domains and the
// TSC frequency the trace was read with, to edit and read it again.
import { memo, useEffect, useRef, useState } from 'react';
import type { SimClient } from '../sim/client';
import type { RunReport, Summary, TraceOptions } from '../sim/types';
import type { RecordedColumn } from '../app/useRecorded';
import { message } from '../app/useErrors';
import { fmt } from '../lib/format';

/**
 * The fitted scenario's policies, as `schedsim trace report --simulate` runs them by default: the recording
 * host's own twin (KVM on Linux's scheduler, the trace's cgroup settings from the mapping), then Xen's Credit and
 * Credit2.
 */
export const FITTED_SCHEDULERS = ['kvm', 'credit', 'credit2'] as const;

interface Props {
  readonly client: SimClient;
  readonly recorded: readonly RecordedColumn[];
  /** Traces read but not shown yet: their mapping is chosen here first. */
  readonly staged: readonly RecordedColumn[];
  readonly onShow: (id: string) => void;
  readonly onCancel: (id: string) => void;
  /** Puts the fitted scenario `text` (named `name`) on screen, its policies as the columns. */
  readonly onSimulate: (text: string, name: string, columns: readonly string[]) => void;
  readonly onReopen: (id: string, options: TraceOptions) => Promise<string | null>;
}

/** A run object of `schedsim trace report --simulate`: its domains carry their wake-to-run summary. */
type ComparedReport = RunReport & {
  readonly domains: Record<string, RunReport['domains'][string] & { wake_to_run_ms?: Summary }>;
};

type Comparison =
  | { readonly state: 'running' }
  | { readonly state: 'done'; readonly runs: readonly ComparedReport[] }
  | { readonly state: 'failed'; readonly error: string };

/** The recorded run's domains (the fitted scenario may add a driver domain the host had not). */
function rows(runs: readonly ComparedReport[]): { policy: string; domain: string; run: ComparedReport }[] {
  const recorded = runs[0];
  if (!recorded) return [];
  const domains = Object.keys(recorded.domains);
  return runs.flatMap((run) => domains.map((domain) => ({ policy: run.policy, domain, run })));
}

/** `v - base` with its sign, or an empty cell for the recording's own row. */
function delta(v: number | undefined, base: number | undefined, own: boolean): string {
  if (own || v === undefined || base === undefined) return '';
  const d = v - base;
  return `${d >= 0 ? '+' : '−'}${fmt(Math.abs(d), 3)}`;
}

function ComparisonTable({ runs }: { readonly runs: readonly ComparedReport[] }) {
  const recorded = runs[0]!;
  return (
    <table className="recorded-vs-simulated" data-testid="recorded-vs-simulated">
      <caption>
        Recorded vs the fitted scenario simulated (Δ: simulated − recorded; wake-to-run in ms)
      </caption>
      <thead>
        <tr>
          <th>Run</th>
          <th>Domain</th>
          <th>CPU share</th>
          <th>Δ share</th>
          <th>Wake-to-run p50</th>
          <th>Δ p50</th>
          <th>p99</th>
          <th>Δ p99</th>
        </tr>
      </thead>
      <tbody>
        {rows(runs).map(({ policy, domain, run }) => {
          const own = run === recorded;
          const d = run.domains[domain];
          const r = recorded.domains[domain];
          const w = d?.wake_to_run_ms;
          const rw = r?.wake_to_run_ms;
          return (
            <tr key={`${policy}/${domain}`} data-run={policy} data-domain={domain}>
              <td>{own ? 'recorded' : policy}</td>
              <td>{domain}</td>
              <td data-metric="cpu_share">{fmt(d?.cpu_share ?? NaN, 3)}</td>
              <td data-metric="cpu_share_delta">{delta(d?.cpu_share, r?.cpu_share, own)}</td>
              <td data-metric="wake_p50">{fmt(w?.p50 ?? NaN, 3)}</td>
              <td data-metric="wake_p50_delta">{delta(w?.p50, rw?.p50, own)}</td>
              <td data-metric="wake_p99">{fmt(w?.p99 ?? NaN, 3)}</td>
              <td data-metric="wake_p99_delta">{delta(w?.p99, rw?.p99, own)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** One trace's mapping and TSC frequency, edited and read again. */
function ReadOptions({
  client,
  column,
  onReopen,
  open = false,
  onEdit,
}: {
  readonly client: SimClient;
  readonly column: RecordedColumn;
  readonly onReopen: Props['onReopen'];
  /** Open from the start (a staged trace's mapping is what is asked for). */
  readonly open?: boolean;
  /** Told the options as edited, not yet read again (a staged trace's "Show" reads with them). */
  readonly onEdit?: (options: TraceOptions) => void;
}) {
  const [mapping, setMapping] = useState<string | null>(null);
  const [tsc, setTsc] = useState(column.options.tscHz ? String(column.options.tscHz) : '');
  const [note, setNote] = useState<string | null>(null);
  const load = () => {
    if (mapping !== null) return;
    client.traceMapping(column.run.runId).then(
      (m) => setMapping(JSON.stringify(JSON.parse(m) as unknown, null, 2)),
      (e: unknown) => setNote(message(e)),
    );
  };
  // Open from the start: the mapping is filled in without a click (a toggle event may not come).
  const runId = column.run.runId;
  useEffect(() => {
    if (!open) return;
    let live = true;
    client.traceMapping(runId).then(
      (m) => live && setMapping((cur) => cur ?? JSON.stringify(JSON.parse(m) as unknown, null, 2)),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [open, client, runId]);
  const apply = (options: TraceOptions) => {
    setNote('Reading…');
    void onReopen(column.id, options).then((err) => {
      setNote(err ?? 'Read again.');
      if (err === null && options.mapping === undefined) setMapping(null);
    });
  };
  const tscHz = (): number | undefined => {
    const v = Number(tsc);
    return tsc.trim() !== '' && Number.isFinite(v) && v >= 1 ? v : undefined;
  };
  const xen = (column.run.report as { recorded?: { format?: string } }).recorded?.format === 'xentrace';
  return (
    <details className="trace-read-options" open={open} onToggle={(e) => e.currentTarget.open && load()}>
      <summary>Mapping{xen ? ' and TSC frequency' : ''}</summary>
      <p className="muted">
        Threads become vCPUs, grouped into domains by process (QEMU&apos;s <code>CPU n/KVM</code> threads by
        their VM); edit the domains by hand (<code>pids</code>, <code>tids</code>, <code>comms</code> with{' '}
        <code>*</code> prefixes, <code>weight</code>, <code>rest</code>, <code>cpus</code>), as{' '}
        <code>schedsim trace mapping</code> prints it.
      </p>
      <textarea
        data-testid="trace-mapping"
        aria-label={`Mapping of ${column.label}`}
        rows={10}
        spellCheck={false}
        value={mapping ?? ''}
        onChange={(e) => {
          setMapping(e.target.value);
          onEdit?.({ mapping: e.target.value, tscHz: tscHz() });
        }}
      />
      <label>
        TSC frequency [Hz] (xentrace; 2.4 GHz when empty){' '}
        <input
          data-testid="trace-tsc-hz"
          inputMode="numeric"
          value={tsc}
          onChange={(e) => {
            setTsc(e.target.value);
            const v = Number(e.target.value);
            const hz = e.target.value.trim() !== '' && Number.isFinite(v) && v >= 1 ? v : undefined;
            onEdit?.({ mapping: mapping ?? undefined, tscHz: hz });
          }}
          placeholder="2400000000"
        />
      </label>
      <button
        type="button"
        data-testid="trace-reread"
        onClick={() => apply({ mapping: mapping ?? undefined, tscHz: tscHz() })}
      >
        Read again with this mapping
      </button>
      <button type="button" onClick={() => apply({ tscHz: tscHz() })}>
        Group by process (the proposed mapping)
      </button>
      {note && (
        <span className="muted" data-testid="trace-read-note">
          {' '}
          {note}
        </span>
      )}
    </details>
  );
}

type RowProps = Pick<Props, 'client' | 'onSimulate' | 'onReopen'> & { readonly column: RecordedColumn };

/** A trace read but not shown: its mapping and TSC frequency, then "Show" (or "Cancel"). */
function StagedRow({
  client,
  column,
  onReopen,
  onShow,
  onCancel,
}: RowProps & Pick<Props, 'onShow' | 'onCancel'>) {
  // The mapping edited before "Show" is the one the column opens with: read again with it first.
  const edits = useRef<TraceOptions | null>(null);
  const [state, setState] = useState<string | null>(null);
  const row = useRef<HTMLDivElement>(null);
  // It appears far down the page, under the columns: brought into sight, or nothing seems to happen.
  useEffect(() => {
    row.current?.scrollIntoView({ block: 'start' });
  }, []);
  const show = () => {
    const options = edits.current;
    if (!options) {
      onShow(column.id);
      return;
    }
    setState('Reading with your mapping…');
    void onReopen(column.id, options).then((err) => {
      if (err !== null) setState(`Not shown: ${err}`);
      else onShow(column.id);
    });
  };
  return (
    <div className="recorded-trace" data-testid="staged-trace" data-policy={column.id} ref={row}>
      <h3>{column.label} (not shown yet)</h3>
      <button type="button" data-testid="trace-show" onClick={show}>
        Show
      </button>{' '}
      <button type="button" onClick={() => onCancel(column.id)}>
        Cancel
      </button>
      {state && (
        <span className="muted" role="status" data-testid="trace-show-note">
          {' '}
          {state}
        </span>
      )}
      <ReadOptions
        client={client}
        column={column}
        onReopen={onReopen}
        open
        onEdit={(o) => {
          edits.current = o;
        }}
      />
    </div>
  );
}

function TraceRow({ client, column, onSimulate, onReopen }: RowProps) {
  // Of the run it was made for: a trace read again is another run, whose comparison starts over.
  const [made, setComparison] = useState<(Comparison & { readonly runId: string }) | null>(null);
  const comparison = made?.runId === column.run.runId ? made : null;
  const simulate = () => {
    const runId = column.run.runId;
    setComparison({ state: 'running', runId });
    void (async () => {
      try {
        const text = await client.fittedScenario(runId, FITTED_SCHEDULERS);
        onSimulate(text, `Fitted to ${column.label.replace(/^Recorded: /, '')}`, FITTED_SCHEDULERS);
        const runs = (await client.compareRecorded(runId, FITTED_SCHEDULERS)) as readonly ComparedReport[];
        setComparison({ state: 'done', runs, runId });
      } catch (e) {
        setComparison({ state: 'failed', error: message(e), runId });
      }
    })();
  };
  return (
    <div className="recorded-trace" data-testid="recorded-trace" data-policy={column.id}>
      <h3>{column.label}</h3>
      <button
        type="button"
        data-testid="simulate-load"
        disabled={comparison?.state === 'running'}
        title="Fit a scenario to this trace (each thread's run and sleep times as a workload) and run it under Credit and Credit2 beside the recording"
        onClick={simulate}
      >
        Simulate this load
      </button>
      {comparison?.state === 'running' && <span className="muted"> Simulating…</span>}
      {comparison?.state === 'failed' && (
        <span className="error" role="alert">
          {' '}
          {comparison.error}
        </span>
      )}
      {comparison?.state === 'done' && <ComparisonTable runs={comparison.runs} />}
      <ReadOptions client={client} column={column} onReopen={onReopen} />
    </div>
  );
}

/** Memoised: it does not depend on the playhead. */
export const RecordedPanel = memo(function RecordedPanel({
  recorded,
  staged,
  onShow,
  onCancel,
  ...rest
}: Props) {
  if (recorded.length === 0 && staged.length === 0) return null;
  return (
    <section className="recorded-panel" data-testid="recorded-panel" aria-label="Recorded traces">
      <h2>Recorded traces</h2>
      {staged.map((c) => (
        <StagedRow key={c.id} column={c} onShow={onShow} onCancel={onCancel} {...rest} />
      ))}
      {recorded.map((c) => (
        <TraceRow key={c.id} column={c} {...rest} />
      ))}
    </section>
  );
});
