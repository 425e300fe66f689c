// Recorded columns: trace files opened in the page (the file input, or a file dropped on the page), each read in
// the trace worker into a run answering the same queries as a simulated one (sim/runs `recordedSource`), shown
// beside the scenario's columns until removed. A file that is not a trace puts the reader's message in the banner.
// Each trace opened is kept in IndexedDB under its SHA-256, which the share link names (lib/traceLink): a link
// opened here again shows its traces; one whose trace this browser lacks says so and waits for "Open trace…".
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { recordedColumnId } from '../lib/columns';
import type { SimClient } from '../sim/client';
import type { RunResult, TraceOptions } from '../sim/types';
import { message } from './useErrors';
import { loadTrace, parseTraces, sha256, storeTrace, traceTooLarge, type TraceRef } from '../lib/traceLink';
import { findSample } from '../lib/samples';

/** A recorded column: its run and its label ("Recorded: FILE"). */
export interface RecordedColumn {
  readonly id: string;
  readonly label: string;
  readonly run: RunResult;
  /** The file it was read from, and how (to read it again under an edited mapping). */
  readonly file: File;
  readonly options: TraceOptions;
  /** SHA-256 of the file's bytes (hex): how the share link names it. */
  readonly hash: string;
  /** Shown as a column; false while its mapping is being chosen ("mapping first"). */
  readonly shown: boolean;
}

export interface Recorded {
  /** The recorded columns shown. */
  readonly recorded: readonly RecordedColumn[];
  /** Traces read but not shown yet, their mapping being chosen. */
  readonly staged: readonly RecordedColumn[];
  /** Whether a file opened waits for its mapping to be chosen before it is shown. */
  readonly mappingFirst: boolean;
  readonly setMappingFirst: (on: boolean) => void;
  /** Shows a staged trace as a column. */
  readonly show: (id: string) => void;
  /** Reads `file` into a new recorded column. */
  readonly openFile: (file: File) => void;
  /** Opens a recording shipped with the page (lib/samples) as a column, unless one of the same file is open. */
  readonly openSample: (id: string) => void;
  readonly removeRecorded: (id: string) => void;
  /**
   * Reads column `id`'s file again with `options` (an edited mapping, a TSC frequency), replacing its run in
   * place; resolves with the reader's message when it cannot (the column stays as it was), else null.
   */
  readonly reopen: (id: string, options: TraceOptions) => Promise<string | null>;
  /** The traces for the share link: the open ones, then those a link named that are not open yet. */
  readonly traceRefs: readonly TraceRef[];
}

/** Share buckets of a recorded column [ms]. */
const BUCKET_MS = 10;

export function useRecorded(client: SimClient, addError: (m: string) => void): Recorded {
  const [all, setRecorded] = useState<readonly RecordedColumn[]>([]);
  const recorded = useMemo(() => all.filter((c) => c.shown), [all]);
  const staged = useMemo(() => all.filter((c) => !c.shown), [all]);
  const [mappingFirst, setMappingFirst] = useState(false);
  const mappingFirstRef = useRef(mappingFirst);
  useEffect(() => {
    mappingFirstRef.current = mappingFirst;
  }, [mappingFirst]);
  const next = useRef(0);

  // Traces a link named that this browser had not kept: opened with the link's mapping once their file is.
  const [pending, setPending] = useState<readonly TraceRef[]>([]);
  const pendingRef = useRef(pending);
  useEffect(() => {
    pendingRef.current = pending;
  }, [pending]);

  const open = useCallback(
    (file: File, given?: TraceOptions): Promise<void> => {
      const id = recordedColumnId(++next.current);
      const label = `Recorded: ${file.name}`;
      return (async () => {
        try {
          // Refused by its size before a byte of it is read.
          const big = traceTooLarge(file.name, file.size);
          if (big !== null) throw new Error(big);
          const bytes = new Uint8Array(await file.arrayBuffer());
          const hash = await sha256(bytes);
          const wanted = pendingRef.current.find((r) => r.hash === hash);
          const options: TraceOptions =
            given ?? (wanted ? { mapping: wanted.mapping, tscHz: wanted.tscHz } : {});
          void storeTrace(hash, file.name, bytes.slice());
          const run = await client.openTrace(bytes, label, id, BUCKET_MS, options);
          setPending((prev) => prev.filter((r) => r.hash !== hash));
          // A link's trace is shown as the link had it; a file opened by hand may wait for its mapping.
          const shown = given !== undefined || !mappingFirstRef.current;
          setRecorded((prev) => [...prev, { id, label, run, file, options, hash, shown }]);
        } catch (e) {
          addError(`${file.name} could not be opened as a trace: ${message(e)}`);
        }
      })();
    },
    [client, addError],
  );
  const openFile = useCallback((file: File) => void open(file), [open]);

  const recordedRef = useRef(all);
  useEffect(() => {
    recordedRef.current = all;
  }, [all]);
  // Samples asked for and not yet read, so a step shown twice in a row opens one column.
  const fetching = useRef(new Set<string>());
  const openSample = useCallback(
    (id: string) => {
      const sample = findSample(id);
      if (!sample) {
        addError(`There is no sample recording "${id}" in this build.`);
        return;
      }
      if (fetching.current.has(id) || recordedRef.current.some((c) => c.file.name === sample.name)) return;
      fetching.current.add(id);
      void (async () => {
        try {
          const res = await fetch(sample.url);
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          await open(new File([await res.blob()], sample.name), { mapping: sample.mapping });
        } catch (e) {
          addError(`The sample recording ${sample.name} could not be fetched: ${message(e)}`);
        } finally {
          fetching.current.delete(id);
        }
      })();
    },
    [open, addError],
  );

  // The link's traces, once: from this browser's store, or named as missing.
  const restored = useRef(false);
  useEffect(() => {
    if (restored.current) return;
    restored.current = true;
    const { refs, errors } = parseTraces(window.location.hash);
    for (const e of errors) addError(e);
    void (async () => {
      const missing: TraceRef[] = [];
      for (const ref of refs) {
        const file = await loadTrace(ref.hash);
        if (file) void open(file, { mapping: ref.mapping, tscHz: ref.tscHz });
        else missing.push(ref);
      }
      if (missing.length === 0) return;
      setPending(missing);
      for (const ref of missing)
        addError(
          `This link shows the recorded trace ${ref.name} (SHA-256 ${ref.hash.slice(0, 12)}…), which this ` +
            'browser has not kept: open that file with "Open trace…" (or drop it on the page) to see it.',
        );
    })();
  }, [open, addError]);

  const show = useCallback((id: string) => {
    setRecorded((prev) => prev.map((c) => (c.id === id ? { ...c, shown: true } : c)));
  }, []);
  const reopen = useCallback(
    async (id: string, options: TraceOptions): Promise<string | null> => {
      const col = recordedRef.current.find((c) => c.id === id);
      if (!col) return `${id} is no longer open`;
      // A new run id: the old run answers the views until the new one replaces it.
      const runId = `${id}~${++next.current}`;
      try {
        const bytes = new Uint8Array(await col.file.arrayBuffer());
        const run = await client.openTrace(bytes, col.label, runId, BUCKET_MS, options);
        client.release([col.run.runId]);
        setRecorded((prev) => prev.map((c) => (c.id === id ? { ...c, run, options } : c)));
        return null;
      } catch (e) {
        return message(e);
      }
    },
    [client],
  );

  const removeRecorded = useCallback(
    (id: string) => {
      const col = recordedRef.current.find((c) => c.id === id);
      client.release([col?.run.runId ?? id]);
      setRecorded((prev) => prev.filter((c) => c.id !== id));
    },
    [client],
  );

  // A file dropped anywhere on the page opens as a recorded column (the browser would otherwise navigate to it).
  useEffect(() => {
    const over = (e: DragEvent) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      const files = e.dataTransfer?.files;
      if (!files || files.length === 0) return;
      e.preventDefault();
      for (const f of Array.from(files)) openFile(f);
    };
    window.addEventListener('dragover', over);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('drop', drop);
    };
  }, [openFile]);

  const traceRefs = useMemo<readonly TraceRef[]>(
    () => [
      ...recorded.map((c) => ({
        hash: c.hash,
        name: c.file.name,
        mapping: c.options.mapping,
        tscHz: c.options.tscHz,
      })),
      ...pending,
    ],
    [recorded, pending],
  );

  return {
    recorded,
    staged,
    mappingFirst,
    setMappingFirst,
    show,
    openFile,
    openSample,
    removeRecorded,
    reopen,
    traceRefs,
  };
}
