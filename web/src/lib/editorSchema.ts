// The scenario editor's view of scenarios/schema.json: the form is generated from the same schema the simulator
// validates against, so a parameter a policy adds to the schema appears in the editor without UI work. The
// simulator (wasm `validate_scenario`) stays the one validator; this file only reads its messages back into
// field paths so each error can sit at its field.
import schemaText from '../../../scenarios/schema.json?raw';
import { applyEdits, format, modify } from 'jsonc-parser';
import { splitProblems } from './format';
import type { Json } from './share';

export interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly enum?: readonly Json[];
  readonly const?: Json;
  readonly default?: Json;
  readonly description?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly items?: SchemaNode;
  readonly prefixItems?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly allOf?: readonly { readonly if?: SchemaNode; readonly then?: SchemaNode }[];
}

export const SCENARIO_SCHEMA = JSON.parse(schemaText) as SchemaNode & { $defs: Record<string, SchemaNode> };

/** Follows `$ref`s to `#/$defs/NAME`. */
export function deref(node: SchemaNode, root = SCENARIO_SCHEMA): SchemaNode {
  let n = node;
  for (let i = 0; n.$ref && i < 16; i++) {
    const name = n.$ref.replace(/^#\/\$defs\//, '');
    const target = root.$defs[name];
    if (!target) break;
    // Keywords beside a $ref (a description) stay; the target fills in the rest.
    const { $ref: _ref, ...rest } = n;
    n = { ...target, ...rest };
  }
  return n;
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The schema that applies to `value`: `$ref`s followed and the `allOf: [{if: {properties: {K: {const}}}, then}]`
 * branches whose condition the value meets merged in (a workload's fields by its type, a policy's params by its
 * scheduler).
 */
export function effective(node: SchemaNode, value: Json | undefined, root = SCENARIO_SCHEMA): SchemaNode {
  const n = deref(node, root);
  if (!n.allOf || !isObject(value)) return n;
  let props: Record<string, SchemaNode> = { ...n.properties };
  let required = [...(n.required ?? [])];
  for (const branch of n.allOf) {
    const cond = branch.if?.properties;
    if (!cond || !branch.then) continue;
    const holds = Object.entries(cond).every(
      ([k, c]) => c.const !== undefined && JSON.stringify(value[k]) === JSON.stringify(c.const),
    );
    if (!holds) continue;
    const then = deref(branch.then, root);
    for (const [k, p] of Object.entries(then.properties ?? {})) {
      // A `then` that narrows a property (policy params) replaces it; the base keeps its description.
      props = {
        ...props,
        [k]: { ...props[k], ...deref(p, root), description: p.description ?? props[k]?.description },
      };
    }
    required = [...new Set([...required, ...(then.required ?? [])])];
  }
  return { ...n, properties: props, required };
}

/**
 * A new item of a list in the form ("+ Add domain"): its skeleton, and for a domain one CPU-bound task, so that
 * adding it changes what runs (a domain without tasks only idles).
 */
export function freshItem(items: SchemaNode, name: string, root = SCENARIO_SCHEMA): Json {
  const item = skeleton(items, name, root);
  const tasks = deref(items, root).properties?.tasks;
  if (tasks && item && typeof item === 'object' && !Array.isArray(item) && !('tasks' in item)) {
    const task = deref(tasks, root).items;
    if (task) return { ...item, tasks: [skeleton(task, 'burn', root)] };
  }
  return item;
}

/** A list's label in the singular ("policies" -> "policy", "domains" -> "domain"). */
export function singular(label: string): string {
  if (/ies$/.test(label)) return label.replace(/ies$/, 'y');
  return label.replace(/s$/, '');
}

/** A fresh value that meets the schema's required fields (for "Add a domain" and the like). */
export function skeleton(node: SchemaNode, name: string, root = SCENARIO_SCHEMA): Json {
  const n = deref(node, root);
  if (n.const !== undefined) return n.const;
  if (n.default !== undefined) return n.default;
  if (n.enum) return n.enum[0] ?? null;
  if (n.properties) {
    const out: Record<string, Json> = {};
    for (const key of n.required ?? []) {
      const p = n.properties[key];
      if (p) out[key] = key === 'name' || key === 'id' ? name : skeleton(p, name, root);
    }
    // A workload needs its type before its branch applies; "cpu" needs nothing else.
    const full = effective(n, out, root);
    for (const key of full.required ?? []) {
      const p = full.properties?.[key];
      if (p && !(key in out)) out[key] = skeleton(p, name, root);
    }
    return out;
  }
  const type = Array.isArray(n.type) ? n.type[0] : n.type;
  if (type === 'integer' || type === 'number') return n.minimum ?? 0;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  if (type === 'object') return {};
  return name;
}

export interface Problem {
  /** Field path as the simulator names it: `domains[1].weight`, `(scenario)` for the root. */
  readonly path: string;
  readonly message: string;
}

/** The simulator's validation message as one problem per field. */
export function parseProblems(message: string): Problem[] {
  const body = message.replace(/^invalid scenario:\s*/, '');
  const { items } = splitProblems(body);
  return (items.length > 0 ? items : [body]).map((item) => {
    const m = /^([^\s:]+):\s*(.*)$/s.exec(item.trim());
    return m ? { path: m[1]!, message: m[2]! } : { path: '(scenario)', message: item.trim() };
  });
}

/** `parent` + `key` in the simulator's path syntax. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/** The JSON text with `value` set at `path` (a list of keys), creating objects on the way. */
export function setIn(root: Json, path: readonly (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const arr = Array.isArray(root) ? [...root] : [];
    if (value === undefined && rest.length === 0) arr.splice(head, 1);
    else arr[head] = setIn(arr[head] ?? null, rest, value);
    return arr;
  }
  const obj: Record<string, Json> = isObject(root) ? { ...root } : {};
  if (value === undefined && rest.length === 0) delete obj[head!];
  else obj[head!] = setIn(obj[head!] ?? null, rest, value);
  return obj;
}

/**
 * `text` with the value at `path` set to `value` (removed when undefined), changing only the lines that value
 * spans: a form edit shows in the JSON view as that edit, not as the whole file reformatted. Falls back to
 * reformatting the whole text when the text cannot be edited in place (it is not an object, say).
 */
export function editJsonText(
  text: string,
  path: readonly (string | number)[],
  value: Json | undefined,
): string {
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch {
    return text;
  }
  const want = setIn(doc, path, value);
  try {
    // Edited unformatted (formatting the edit reformats the whole parent array), then each inserted piece is
    // laid out on its own.
    const edits = [...modify(text, [...path], value, {})].sort((a, b) => a.offset - b.offset);
    let out = applyEdits(text, edits);
    let shift = 0;
    const inserted = edits.map((e) => {
      const r = { offset: e.offset + shift, length: e.content.length };
      shift += e.content.length - e.length;
      return r;
    });
    const layout = { insertSpaces: true, tabSize: 2, eol: '\n' };
    for (const r of inserted.reverse()) if (r.length > 0) out = applyEdits(out, format(out, r, layout));
    if (canonical(JSON.parse(out) as Json) === canonical(want)) return out;
  } catch {
    // Not editable in place: reformatted below.
  }
  return JSON.stringify(want, null, 2) + '\n';
}

/** Whether two JSON texts hold the same value (key order aside). */
export function sameJson(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return canonical(JSON.parse(a) as Json) === canonical(JSON.parse(b) as Json);
  } catch {
    return false;
  }
}

function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k]!)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
