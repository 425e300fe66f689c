// The scenario library: scenarios/index.json and the files it lists, bundled by Vite as raw text so the
// page sends exactly the bytes the CLI reads (and the wasm validates them, not us).

export interface ScenarioEntry {
  readonly id: string;
  /** Path relative to scenarios/. */
  readonly file: string;
  readonly title: string;
  readonly summary: string;
  readonly source: string;
  readonly kind: string;
}

export interface ScenarioIndex {
  readonly default: string;
  readonly scenarios: readonly ScenarioEntry[];
}

/** Lazy loaders keyed by path relative to scenarios/ (e.g. "credit-boost.json"). */
export type ScenarioFiles = Readonly<Record<string, () => Promise<string>>>;

// One chunk per file, fetched on demand; the glob must be a literal for Vite to expand it.
// schema.json is not a scenario (the editor imports it directly).
const globbed = import.meta.glob(['../../../scenarios/**/*.json', '!../../../scenarios/schema.json'], {
  query: '?raw',
  import: 'default',
}) as Record<string, () => Promise<string>>;

export const bundledFiles: ScenarioFiles = Object.fromEntries(
  Object.entries(globbed).map(([path, load]) => [path.replace(/^.*?\/scenarios\//, ''), load]),
);

function fail(path: string, message: string): never {
  throw new Error(`scenarios/index.json: ${path}: ${message}`);
}

function str(obj: Record<string, unknown>, key: string, path: string, optional = false): string {
  const v = obj[key];
  if (typeof v === 'string') return v;
  if (optional && v === undefined) return '';
  return fail(`${path}.${key}`, v === undefined ? 'missing' : 'must be a string');
}

/** Parses and checks index.json; throws an Error naming the field path on any problem. */
export function parseIndex(text: string): ScenarioIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`scenarios/index.json: not JSON (${(e as Error).message})`, { cause: e });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('(root)', 'must be an object');
  const root = raw as Record<string, unknown>;
  const def = str(root, 'default', '(root)');
  if (!Array.isArray(root.scenarios)) fail('scenarios', 'must be an array');
  const seen = new Set<string>();
  const scenarios = (root.scenarios as unknown[]).map((item, i): ScenarioEntry => {
    const path = `scenarios[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) fail(path, 'must be an object');
    const o = item as Record<string, unknown>;
    const entry = {
      id: str(o, 'id', path),
      file: str(o, 'file', path),
      title: str(o, 'title', path, true),
      summary: str(o, 'summary', path, true),
      source: str(o, 'source', path, true),
      kind: str(o, 'kind', path, true),
    };
    if (seen.has(entry.id)) fail(`${path}.id`, `duplicate id ${JSON.stringify(entry.id)}`);
    seen.add(entry.id);
    return { ...entry, title: entry.title || entry.id };
  });
  if (!seen.has(def)) fail('default', `${JSON.stringify(def)} is not one of the listed ids`);
  return { default: def, scenarios };
}

export function findEntry(index: ScenarioIndex, id: string): ScenarioEntry | undefined {
  return index.scenarios.find((s) => s.id === id);
}

export async function loadIndex(files: ScenarioFiles = bundledFiles): Promise<ScenarioIndex> {
  const load = files['index.json'];
  if (!load) throw new Error('scenarios/index.json is missing from the build');
  return parseIndex(await load());
}

export async function loadScenarioText(
  entry: ScenarioEntry,
  files: ScenarioFiles = bundledFiles,
): Promise<string> {
  const load = files[entry.file.replace(/^\.\//, '')];
  if (!load) throw new Error(`scenarios/${entry.file} (listed for "${entry.id}") is missing from the build`);
  return load();
}

/**
 * Starts fetching the library file a link names (`ID.json`, the library's naming) before the index says where it
 * is, so the two load side by side on a fresh link; the module loader keeps the fetched chunk, and
 * `loadScenarioText` finds it there. Returns whether there was such a file to fetch.
 */
export function prefetchScenario(id: string, files: ScenarioFiles = bundledFiles): boolean {
  const load = files[`${id}.json`];
  if (!load) return false;
  load().catch(() => {
    // loadScenarioText reports the failure when the page asks for the file itself.
  });
  return true;
}

/** Library entries grouped by kind, kinds in first-seen order. */
export function groupByKind(index: ScenarioIndex): [string, ScenarioEntry[]][] {
  const groups = new Map<string, ScenarioEntry[]>();
  for (const s of index.scenarios) {
    const kind = s.kind || 'other';
    const list = groups.get(kind);
    if (list) list.push(s);
    else groups.set(kind, [s]);
  }
  return [...groups];
}
