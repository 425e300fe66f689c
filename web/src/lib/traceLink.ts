// Recorded traces and the share link. A trace is megabytes and cannot ride in a URL, so the link names it by the
// SHA-256 of its bytes (with its file name and how it was read: mapping, TSC frequency), and the page keeps the
// bytes of every trace it opened in this browser's IndexedDB under that hash. A link opened where the trace was
// opened before shows it again; elsewhere the page says which file the link wants and waits for "Open trace…"
// (a file with that hash then opens with the link's mapping).

/** One recorded trace as the link names it. */
export interface TraceRef {
  /** SHA-256 of the file's bytes, lowercase hex. */
  readonly hash: string;
  /** Its file name. */
  readonly name: string;
  /** The mapping it was read with (JSON text), when not the proposed one. */
  readonly mapping?: string;
  /** xentrace: the TSC frequency it was read with [Hz]. */
  readonly tscHz?: number;
}

/** The fragment parameter that carries the traces. */
export const TRACES_PARAM = 'traces';
/** Most traces a link names (the page's columns are few). */
const MAX_TRACES = 8;

/**
 * Largest trace file the page opens [bytes]: the page holds a trace in memory (and the core expands a
 * gzip-compressed one to at most as much, sim-wasm/core/src/recorded/gzip.rs), so a larger file is refused before it
 * is read. The CLI and Python read larger uncompressed traces streaming.
 */
export const MAX_TRACE_FILE_BYTES = 512 * 1024 * 1024;

/** Why a file of `size` bytes is not opened, or null when it may be. */
export function traceTooLarge(name: string, size: number): string | null {
  if (size <= MAX_TRACE_FILE_BYTES) return null;
  const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;
  return `the page opens trace files of at most ${mib(MAX_TRACE_FILE_BYTES)}, and ${name} is ${mib(size)}: read it with the CLI (schedsim trace report) or Python, which stream it`;
}
/** Longest mapping a link carries [characters]. */
const MAX_MAPPING = 64 * 1024;

const HASH = /^[0-9a-f]{64}$/;

/** The lowercase hex SHA-256 of `bytes`. */
export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The fragment parameter's value for `refs` (empty for none). */
export function encodeTraces(refs: readonly TraceRef[]): string {
  if (refs.length === 0) return '';
  return JSON.stringify(
    refs.map((r) => ({
      h: r.hash,
      n: r.name,
      ...(r.mapping !== undefined ? { m: r.mapping } : {}),
      ...(r.tscHz !== undefined ? { f: r.tscHz } : {}),
    })),
  );
}

/** Appends the traces to a share link's `?query#fragment` (unchanged when there are none). */
export function withTraces(search: string, refs: readonly TraceRef[]): string {
  const value = encodeTraces(refs);
  if (!value) return search;
  const param = `${TRACES_PARAM}=${encodeURIComponent(value)}`;
  return search.includes('#') ? `${search}&${param}` : `${search}#${param}`;
}

/** The traces a link's fragment names, and what was wrong with the rest. Never throws. */
export function parseTraces(hash: string): { refs: TraceRef[]; errors: string[] } {
  const raw = new URLSearchParams(hash.replace(/^#/, '')).get(TRACES_PARAM);
  if (raw === null) return { refs: [], errors: [] };
  const bad = (why: string) => ({
    refs: [],
    errors: [`The link's recorded traces could not be read (${why}); they are left out.`],
  });
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return bad('not JSON');
  }
  if (!Array.isArray(v)) return bad('not a list');
  const refs: TraceRef[] = [];
  const errors: string[] = [];
  for (const e of v.slice(0, MAX_TRACES) as unknown[]) {
    const o = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    const { h, n, m, f } = o;
    if (typeof h !== 'string' || !HASH.test(h) || typeof n !== 'string') {
      errors.push('A recorded trace in the link has no SHA-256 or file name; it is left out.');
      continue;
    }
    const mapping = typeof m === 'string' && m.length <= MAX_MAPPING ? m : undefined;
    const tscHz = typeof f === 'number' && Number.isFinite(f) && f >= 1 ? f : undefined;
    refs.push({ hash: h, name: n.slice(0, 200), mapping, tscHz });
  }
  if (v.length > MAX_TRACES)
    errors.push(`The link names ${v.length} recorded traces; the first ${MAX_TRACES} are shown.`);
  return { refs, errors };
}

const DB = 'schedlab-traces';
const STORE = 'traces';

function db(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB would not open'));
  });
}

async function tx<T>(mode: IDBTransactionMode, op: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const d = await db();
  try {
    return await new Promise<T>((resolve, reject) => {
      const req = op(d.transaction(STORE, mode).objectStore(STORE));
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
    });
  } finally {
    d.close();
  }
}

/** Keeps a trace's bytes under its hash (best effort: a browser without room or IndexedDB keeps none). */
export async function storeTrace(hash: string, name: string, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  try {
    await tx('readwrite', (s) => s.put({ name, bytes: new Blob([bytes]) }, hash));
  } catch {
    // Nothing kept: a link to it then asks for the file.
  }
}

/** The trace kept under `hash`, or null. */
export async function loadTrace(hash: string): Promise<File | null> {
  try {
    const v = (await tx('readonly', (s) => s.get(hash) as IDBRequest<unknown>)) as
      { name?: unknown; bytes?: unknown } | undefined;
    if (!v || !(v.bytes instanceof Blob)) return null;
    return new File([v.bytes], typeof v.name === 'string' ? v.name : 'trace');
  } catch {
    return null;
  }
}
