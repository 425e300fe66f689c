// Recorded columns: trace files opened in the page (the file input, or a file dropped on the page), each read in
// the trace worker into a run answering the same queries as a simulated one (sim/runs `recordedSource`), shown
// beside the scenario's columns until removed. A file that is not a trace puts the reader's message in the banner.
import { useCallback, useEffect, useRef, useState } from 'react';
import { recordedColumnId } from '../lib/columns';
import type { SimClient } from '../sim/client';
import type { RunResult } from '../sim/types';
import { message } from './useErrors';

/** A recorded column: its run and its label ("Recorded: FILE"). */
export interface RecordedColumn {
  readonly id: string;
  readonly label: string;
  readonly run: RunResult;
}

export interface Recorded {
  readonly recorded: readonly RecordedColumn[];
  /** Reads `file` into a new recorded column. */
  readonly openFile: (file: File) => void;
  readonly removeRecorded: (id: string) => void;
}

/** Share buckets of a recorded column [ms]. */
const BUCKET_MS = 10;

export function useRecorded(client: SimClient, addError: (m: string) => void): Recorded {
  const [recorded, setRecorded] = useState<readonly RecordedColumn[]>([]);
  const next = useRef(0);

  const openFile = useCallback(
    (file: File) => {
      const id = recordedColumnId(++next.current);
      const label = `Recorded: ${file.name}`;
      void (async () => {
        try {
          const bytes = new Uint8Array(await file.arrayBuffer());
          const run = await client.openTrace(bytes, label, id, BUCKET_MS);
          setRecorded((prev) => [...prev, { id, label, run }]);
        } catch (e) {
          addError(`${file.name} could not be opened as a trace: ${message(e)}`);
        }
      })();
    },
    [client, addError],
  );

  const removeRecorded = useCallback(
    (id: string) => {
      client.release([id]);
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

  return { recorded, openFile, removeRecorded };
}
