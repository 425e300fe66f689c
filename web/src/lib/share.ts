// Share links: the URL carries the scenario, the columns and the view, so opening it reproduces the
// same run and the same picture. Library scenarios travel as their id plus a JSON merge patch of the user's
// edits; anything else travels whole. Both are zlib-compressed (fflate) and base64url-encoded.
//
// Link format (`v=1`), in the query except where noted:
//   scenario=ID [#patch=Z] a library scenario, optionally with an RFC 7386 merge patch
//   #s=Z                   a whole scenario file
//   policies=A,B           the columns, in order
//   t=MS                   the playhead [ms]
//   view=A,B               the timelines' window [ms]
//   hide=N,...             hidden columns, 1-based (the 1-4 keys)
//   open=P,...             open panels (editor, export, ...)
//   lesson=ID step=N       the lesson and its step (1-based); alone, the step's scenario, columns and window
//   speed=X                playback speed (simulated ms per ms), one of lib/speed.ts SPEEDS
//   present=1              presentation mode
// The compressed parts go in the fragment: browsers never send it, so no server's URL limit or log sees them
// (s and patch in the query are read too). Links without `v` are the first format (scenario and policies only)
// and still open.
//
// Decoding never throws and never trusts the link: every size is capped before work is done, and anything
// malformed becomes a message for the error banner.
import { Unzlib, strToU8, zlibSync } from 'fflate';
import { parseUrl, type UrlState } from './url';
import { SPEEDS } from './speed';

/** The link format this page writes; it reads this one and the unversioned first one. */
export const LINK_VERSION = 1;
/** The scenario file format this page reads (scenarios/schema.json `schema`). */
export const SCENARIO_SCHEMA = 1;
/** Longest encoded scenario a link may carry [chars]: well under what browsers accept in a fragment. */
export const MAX_ENCODED_CHARS = 100_000;
/** Most bytes a link's scenario may expand to: a compression bomb stops here. */
export const MAX_DECODED_BYTES = 1_000_000;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Upgrades a scenario of schema N to N+1. Empty while schema 1 is the only one there has been. */
export const SCENARIO_MIGRATIONS: Readonly<Record<number, (doc: JsonObject) => JsonObject>> = {};

export type ScenarioRef =
  | { readonly kind: 'library'; readonly id: string; readonly patch: JsonObject | null }
  | { readonly kind: 'inline'; readonly text: string };

export interface ViewState {
  /** Playhead [ms]. */
  readonly time: number | null;
  /** Timelines' window [ms]. */
  readonly view: readonly [number, number] | null;
  /** Hidden column indices (0-based). */
  readonly hidden: readonly number[];
  readonly open: readonly string[];
  readonly lesson: string | null;
  /** Lesson step, 0-based. */
  readonly step: number;
  /** Playback speed [simulated ms per ms], or null for the page's default. */
  readonly speed: number | null;
  /** Presentation mode (a class's projector: reloading or passing the link keeps it). */
  readonly present: boolean;
}

export interface ShareState extends ViewState {
  readonly scenario: ScenarioRef | null;
  readonly policies: readonly string[] | null;
  readonly testing: boolean;
  readonly errors: readonly string[];
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets a key without invoking setters: a hostile "__proto__" key stays a plain property. */
function put(obj: JsonObject, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7386: the patch that turns `base` into `target` (arrays are replaced whole). */
export function createMergePatch(base: Json, target: Json): Json {
  if (!isObject(base) || !isObject(target)) return target;
  const patch: JsonObject = {};
  for (const key of Object.keys(base)) if (!Object.hasOwn(target, key)) put(patch, key, null);
  for (const key of Object.keys(target)) {
    const t = target[key]!;
    if (!Object.hasOwn(base, key)) put(patch, key, t);
    else if (JSON.stringify(base[key]) !== JSON.stringify(t))
      put(patch, key, createMergePatch(base[key]!, t));
  }
  return patch;
}

/** RFC 7386: applies a merge patch (never mutates its inputs). */
export function applyMergePatch(base: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = {};
  if (isObject(base)) for (const key of Object.keys(base)) put(out, key, base[key]!);
  for (const key of Object.keys(patch)) {
    const p = patch[key]!;
    if (p === null) delete out[key];
    else put(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key]! : null, p));
  }
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Compresses JSON text for a link. */
export function encodeData(text: string): string {
  return toBase64Url(zlibSync(strToU8(text), { level: 9 }));
}

export class LinkError extends Error {}

/** Decodes `encodeData`'s output; throws a LinkError saying what is wrong in words a user can act on. */
export function decodeData(encoded: string, what: string): string {
  if (encoded.length > MAX_ENCODED_CHARS) {
    throw new LinkError(
      `The link's ${what} is too large (${Math.round(encoded.length / 1000)} kB; a link carries at most ` +
        `${MAX_ENCODED_CHARS / 1000} kB). Share the scenario as a file instead (Editor → Export file).`,
    );
  }
  const damaged = `The link's ${what} is damaged or incomplete (was the link cut off when it was copied?).`;
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) throw new LinkError(damaged);
  let bytes: Uint8Array;
  try {
    const bin = atob(encoded.replace(/-/g, '+').replace(/_/g, '/'));
    bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    throw new LinkError(damaged);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  let done = false;
  const stream = new Unzlib((chunk, final) => {
    total += chunk.length;
    if (total > MAX_DECODED_BYTES) {
      throw new LinkError(
        `The link's ${what} expands to more than ${MAX_DECODED_BYTES / 1e6} MB, more than a scenario needs; ` +
          'it was not opened.',
      );
    }
    chunks.push(chunk);
    if (final) done = true;
  });
  try {
    // Small input chunks bound the output of each push (deflate expands at most ~1000x).
    const STEP = 512;
    for (let i = 0; i < bytes.length; i += STEP)
      stream.push(bytes.subarray(i, i + STEP), i + STEP >= bytes.length);
  } catch (e) {
    if (e instanceof LinkError) throw e;
    throw new LinkError(damaged);
  }
  if (!done) throw new LinkError(damaged);
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(out);
  } catch {
    throw new LinkError(damaged);
  }
}

/** Parses JSON from a link; throws a LinkError naming what is wrong. */
function parseJson(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw new LinkError(`The link's ${what} is not valid JSON (${(e as Error).message}).`);
  }
}

/**
 * Brings a scenario to the schema this page reads, or says clearly why it cannot. Returns the JSON text to run.
 * (The simulator still validates the result and names any bad field.)
 */
export function upgradeScenario(doc: Json, what = 'scenario'): string {
  if (!isObject(doc)) throw new LinkError(`The ${what} is not a scenario (a JSON object with "schema": 1).`);
  let cur: JsonObject = doc;
  const version = cur.schema;
  if (typeof version === 'number' && Number.isInteger(version)) {
    if (version > SCENARIO_SCHEMA) {
      throw new LinkError(
        `The ${what} uses scenario schema ${version}, newer than this schedlab reads (schema ` +
          `${SCENARIO_SCHEMA}). Open it with a newer schedlab.`,
      );
    }
    for (let v = version; v < SCENARIO_SCHEMA; v++) {
      const step = SCENARIO_MIGRATIONS[v];
      if (!step) {
        throw new LinkError(
          `The ${what} uses scenario schema ${version}, which this schedlab can no longer read (it reads ` +
            `schema ${SCENARIO_SCHEMA}; there is no upgrade from schema ${v}).`,
        );
      }
      cur = step(cur);
    }
  }
  return JSON.stringify(cur, null, 2);
}

function numberParam(params: URLSearchParams, key: string, errors: string[]): number | null {
  const raw = params.get(key);
  if (raw === null) return null;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0) {
    errors.push(`The link's ${key}=${JSON.stringify(raw.slice(0, 40))} is not a time in ms; ignored.`);
    return null;
  }
  return n;
}

function listParam(params: URLSearchParams, key: string): string[] {
  return (params.get(key) ?? '').split(',').filter((s) => s !== '');
}

const PANEL = /^[a-z][a-z0-9-]{0,31}$/;

/** Reads a share link. Never throws; problems are in `errors` and the parts they affect are dropped. */
export function parseShareUrl(search: string, hash = ''): ShareState {
  const base: UrlState = parseUrl(search);
  const params = new URLSearchParams(search);
  const fragment = new URLSearchParams(hash.replace(/^#/, ''));
  const data = (key: string) => fragment.get(key) ?? params.get(key);
  const errors = [...base.errors];
  const none: ShareState = {
    scenario: base.scenario ? { kind: 'library', id: base.scenario, patch: null } : null,
    policies: base.policies,
    testing: base.testing,
    errors,
    time: null,
    view: null,
    hidden: [],
    open: [],
    lesson: null,
    step: 0,
    speed: null,
    present: false,
  };

  const rawVersion = params.get('v');
  // The first link format named the scenario and policies only; its view parameters read as today's.
  if (rawVersion === null) return { ...none, ...viewParams(params, errors) };
  const version = Number(rawVersion);
  if (!Number.isInteger(version) || version < 1) {
    errors.push(
      `The link's version v=${JSON.stringify(rawVersion.slice(0, 20))} is not one schedlab made; ` +
        'showing the library instead.',
    );
    return { ...none, scenario: null, policies: null };
  }
  if (version > LINK_VERSION) {
    errors.push(
      `This link was made by a newer schedlab (link format ${version}); this one reads format ` +
        `${LINK_VERSION} and older. Showing the library instead.`,
    );
    return { ...none, scenario: null, policies: null };
  }

  let scenario: ScenarioRef | null = none.scenario;
  try {
    const inline = data('s');
    const patch = data('patch');
    if (inline !== null) {
      scenario = {
        kind: 'inline',
        text: upgradeScenario(parseJson(decodeData(inline, 'scenario'), 'scenario'), "link's scenario"),
      };
    } else if (patch !== null && scenario?.kind === 'library') {
      const p = parseJson(decodeData(patch, 'scenario changes'), 'scenario changes');
      if (!isObject(p)) throw new LinkError("The link's scenario changes are not a JSON object.");
      scenario = { ...scenario, patch: p };
    }
  } catch (e) {
    errors.push(`${e instanceof LinkError ? e.message : String(e)} Showing the library instead.`);
    return { ...none, scenario: null, policies: null };
  }

  return { ...none, scenario, ...viewParams(params, errors) };
}

/** The view parameters of a link (playhead, window, hidden columns, panels, lesson, speed). */
function viewParams(params: URLSearchParams, errors: string[]): ViewState {
  const time = numberParam(params, 't', errors);
  let view: [number, number] | null = null;
  const rawView = params.get('view');
  if (rawView !== null) {
    const [a, b, ...rest] = rawView.split(',').map(Number);
    if (
      rest.length === 0 &&
      a !== undefined &&
      b !== undefined &&
      Number.isFinite(a) &&
      Number.isFinite(b) &&
      a >= 0 &&
      b > a
    ) {
      view = [a, b];
    } else {
      errors.push(
        `The link's view=${JSON.stringify(rawView.slice(0, 40))} is not a window "from,to" in ms; ignored.`,
      );
    }
  }
  const hidden = listParam(params, 'hide')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= 4)
    .map((n) => n - 1);
  const open = listParam(params, 'open').filter((p) => PANEL.test(p));
  const rawLesson = params.get('lesson');
  const lesson = rawLesson !== null && PANEL.test(rawLesson) ? rawLesson : null;
  const step = Math.max(0, Math.trunc(Number(params.get('step') ?? '1')) - 1 || 0);
  let speed: number | null = null;
  const rawSpeed = params.get('speed');
  if (rawSpeed !== null) {
    const x = Number(rawSpeed);
    if ((SPEEDS as readonly number[]).includes(x)) speed = x;
    else
      errors.push(
        `The link's speed=${JSON.stringify(rawSpeed.slice(0, 20))} is not one of the speeds ` +
          `(${SPEEDS.join(', ')}); ignored.`,
      );
  }
  const present = params.get('present') === '1';
  return { time, view, hidden, open, lesson, step, speed, present };
}

/** How a link names the scenario on screen (computed once per scenario: compressing is not per-frame work). */
export interface ScenarioLink {
  /** Library id, or null for the user's own scenario. */
  readonly id: string | null;
  /** The edits to the library file, compressed; null when there are none. */
  readonly patch: string | null;
  /** The whole scenario, compressed, when it is not a library one. */
  readonly inline: string | null;
}

/**
 * `text` as a link carries it: a library scenario (`id` with its file's `baseText`) by id plus a patch of the
 * edits, anything else whole.
 */
export function scenarioLink(id: string | null, baseText: string | null, text: string): ScenarioLink {
  if (id !== null && baseText !== null) {
    const patch = createMergePatch(JSON.parse(baseText) as Json, JSON.parse(text) as Json);
    const edited = isObject(patch) && Object.keys(patch).length > 0;
    return { id, patch: edited ? encodeData(JSON.stringify(patch)) : null, inline: null };
  }
  return { id: null, patch: null, inline: encodeData(JSON.stringify(JSON.parse(text))) };
}

/** What the page shows, for `toShareSearch`. */
export interface ShareInput extends Partial<ViewState> {
  readonly scenario: ScenarioLink;
  readonly policies: readonly string[];
  readonly testing: boolean;
}

/** Rounds a time for the URL: µs precision is more than a screen shows. */
function ms(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** The query and fragment of a share link for what is on screen. */
export function toShareSearch(state: ShareInput): string {
  const params = new URLSearchParams();
  const fragment = new URLSearchParams();
  params.set('v', String(LINK_VERSION));
  const { id, patch, inline } = state.scenario;
  if (id !== null) params.set('scenario', id);
  if (patch !== null) fragment.set('patch', patch);
  if (inline !== null) fragment.set('s', inline);
  if (state.policies.length > 0) params.set('policies', state.policies.join(','));
  if (state.time != null && state.time > 0) params.set('t', ms(state.time));
  if (state.view) params.set('view', `${ms(state.view[0])},${ms(state.view[1])}`);
  if (state.hidden && state.hidden.length > 0) params.set('hide', state.hidden.map((i) => i + 1).join(','));
  if (state.open && state.open.length > 0) params.set('open', [...state.open].sort().join(','));
  if (state.lesson) {
    params.set('lesson', state.lesson);
    params.set('step', String((state.step ?? 0) + 1));
  }
  if (state.speed != null) params.set('speed', String(state.speed));
  if (state.present) params.set('present', '1');
  if (state.testing) params.set('testing', '1');
  const hash = fragment.toString();
  return `?${params.toString().replace(/%2C/g, ',')}${hash ? `#${hash}` : ''}`;
}

/** The scenario text a library ref stands for, given the library file's text. */
export function resolveLibraryRef(ref: Extract<ScenarioRef, { kind: 'library' }>, baseText: string): string {
  if (!ref.patch) return baseText;
  let base: Json;
  try {
    base = JSON.parse(baseText) as Json;
  } catch {
    return baseText;
  }
  return upgradeScenario(applyMergePatch(base, ref.patch), "link's scenario");
}
