// Form controls generated from scenarios/schema.json (lib/editorSchema.ts): one control per field, each with
// the simulator's errors for its path shown beneath it. A long list (a host's hundreds of domains) renders only
// the items in view of the form's scroll box (`data-scroll-root`), so typing stays fast in a large scenario.
import {
  createContext,
  useCallback,
  useContext,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import { defaultRangeExtractor, useVirtualizer, type Range } from '@tanstack/react-virtual';
import {
  childPath,
  effective,
  freshItem,
  singular,
  type Problem,
  type SchemaNode,
} from '../lib/editorSchema';
import type { Json } from '../lib/share';

export type Key = string | number;

/**
 * Opens the policy editor on the scenario's policy `index` (a script policy's source field offers it); null
 * where the form has no policy editor to open.
 */
export const EditScriptContext = createContext<((index: number) => void) | null>(null);

/** A script policy's source: `policies[K].params.source`. */
const SCRIPT_SOURCE = /^policies\[(\d+)\]\.params\.source$/;

interface FieldProps {
  readonly schema: SchemaNode;
  readonly value: Json | undefined;
  /** Simulator path (`domains[1].weight`). */
  readonly path: string;
  /** Key path for `onChange`. */
  readonly keys: readonly Key[];
  readonly label: string;
  readonly problems: readonly Problem[];
  /** `undefined` removes the key (back to the default). */
  readonly onChange: (keys: readonly Key[], value: Json | undefined) => void;
}

function typeOf(n: SchemaNode): string | undefined {
  return Array.isArray(n.type) ? n.type[0] : (n.type as string | undefined);
}

function Errors({ id, problems }: { id: string; problems: readonly Problem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul className="field-errors" id={id} data-testid="field-error">
      {problems.map((p, i) => (
        <li key={i}>{p.message}</li>
      ))}
    </ul>
  );
}

function hint(n: SchemaNode): string {
  const parts = [n.description ?? ''];
  if (n.default !== undefined) parts.push(`Default: ${JSON.stringify(n.default)}.`);
  if (n.minimum !== undefined || n.maximum !== undefined)
    parts.push(`Range: ${n.minimum ?? n.exclusiveMinimum ?? '…'} to ${n.maximum ?? '…'}.`);
  return parts.filter(Boolean).join(' ');
}

/** A JSON text box for values the form does not break down (params of an undocumented scheduler). */
function JsonField({
  value,
  onCommit,
  invalid,
  describedBy,
  id,
}: {
  value: Json | undefined;
  onCommit: (v: Json | undefined) => void;
  invalid: boolean;
  describedBy?: string;
  id: string;
}) {
  const shown = value === undefined ? '' : JSON.stringify(value);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState(false);
  const [last, setLast] = useState(shown);
  if (shown !== last) {
    setLast(shown);
    setText(shown);
    setBad(false);
  }
  return (
    <input
      id={id}
      className="json-field"
      value={text}
      aria-invalid={invalid || bad}
      aria-describedby={describedBy}
      spellCheck={false}
      onChange={(e) => {
        const t = e.target.value;
        setText(t);
        if (t.trim() === '') return onCommit(undefined);
        try {
          onCommit(JSON.parse(t) as Json);
          setBad(false);
        } catch {
          setBad(true);
        }
      }}
    />
  );
}

/** One field: a control for a scalar, a fieldset for an object, a list for an array of objects. */
export function SchemaField(props: FieldProps): ReactNode {
  const { value, path, keys, label, problems, onChange } = props;
  const n = effective(props.schema, value);
  const id = useId();
  const mine = problems.filter((p) => p.path === path);
  const errId = `${id}-err`;
  const type = typeOf(n);
  const set = (v: Json | undefined) => onChange(keys, v);
  const editScript = useContext(EditScriptContext);
  const scriptOf = SCRIPT_SOURCE.exec(path);

  if (
    n.properties &&
    (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value)))
  )
    return <ObjectField {...props} schema={n} />;
  if (type === 'array' && n.items && !n.prefixItems) return <ArrayField {...props} schema={n} />;

  let control: ReactNode;
  const common = {
    id,
    'aria-invalid': mine.length > 0,
    'aria-describedby': mine.length > 0 ? errId : undefined,
    'data-path': path,
  };
  if (n.const !== undefined) {
    control = <output id={id}>{JSON.stringify(n.const)}</output>;
  } else if (n.enum) {
    const idx = n.enum.findIndex((e) => JSON.stringify(e) === JSON.stringify(value));
    control = (
      <select
        {...common}
        value={value === undefined ? '' : String(idx)}
        onChange={(e) => set(e.target.value === '' ? undefined : n.enum![Number(e.target.value)])}
      >
        <option value="">{n.default !== undefined ? `default (${String(n.default)})` : '—'}</option>
        {n.enum.map((e, i) => (
          <option key={i} value={i}>
            {String(e)}
          </option>
        ))}
      </select>
    );
  } else if (type === 'boolean') {
    control = (
      <select
        {...common}
        value={value === undefined ? '' : String(value)}
        onChange={(e) => set(e.target.value === '' ? undefined : e.target.value === 'true')}
      >
        <option value="">{n.default !== undefined ? `default (${String(n.default)})` : '—'}</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  } else if (type === 'integer' || type === 'number') {
    control = (
      <NumberInput
        common={common}
        value={value}
        placeholder={n.default !== undefined ? String(n.default) : ''}
        onChange={set}
      />
    );
  } else if (type === 'string' && scriptOf) {
    // A script: its lines kept (a one-line box would flatten them), and the policy editor a click away.
    control = (
      <div className="script-source-field">
        <textarea
          {...common}
          rows={8}
          spellCheck={false}
          wrap="off"
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => set(e.target.value)}
        />
        {editScript && (
          <button
            type="button"
            data-testid="edit-script-source"
            onClick={() => editScript(Number(scriptOf[1]))}
          >
            Open in the policy editor
          </button>
        )}
      </div>
    );
  } else if (type === 'string') {
    control = (
      <input
        {...common}
        type="text"
        spellCheck={false}
        value={typeof value === 'string' ? value : ''}
        placeholder={n.default !== undefined ? String(n.default) : ''}
        onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)}
      />
    );
  } else {
    // oneOf (a priority: "rt" or a nice value), fixed pairs (think_ms), free-form objects: JSON.
    control = (
      <JsonField
        id={id}
        value={value}
        invalid={mine.length > 0}
        describedBy={mine.length > 0 ? errId : undefined}
        onCommit={set}
      />
    );
  }
  return (
    <div className={`field${mine.length > 0 ? ' invalid' : ''}`}>
      <label htmlFor={id} title={hint(n)}>
        {label}
      </label>
      {control}
      <Errors id={errId} problems={mine} />
    </div>
  );
}

/** A number box that keeps what the user typed ("1." or "-") until it is a number. */
function NumberInput({
  common,
  value,
  placeholder,
  onChange,
}: {
  common: Record<string, unknown>;
  value: Json | undefined;
  placeholder: string;
  onChange: (v: Json | undefined) => void;
}) {
  const shown =
    typeof value === 'number' || typeof value === 'string'
      ? String(value)
      : value === undefined
        ? ''
        : JSON.stringify(value);
  const [text, setText] = useState(shown);
  const [last, setLast] = useState(shown);
  if (shown !== last) {
    setLast(shown);
    // Keep "1." or "1e3" as typed while it still stands for the value.
    if (!(text.trim() !== '' && Number(text) === value)) setText(shown);
  }
  return (
    <input
      {...common}
      type="text"
      inputMode="decimal"
      value={text}
      placeholder={placeholder}
      onChange={(e) => {
        const t = e.target.value;
        setText(t);
        if (t.trim() === '') onChange(undefined);
        else if (Number.isFinite(Number(t))) onChange(Number(t));
        // Anything else goes to the simulator as text, so its error names this field.
        else onChange(t);
      }}
    />
  );
}

/** Fields the form leaves to the JSON view: long lists with their own structure. */
const JSON_ONLY = new Set(['claims', 'changes', 'schema', 'summary']);

function ObjectField({ schema, value, path, keys, label, problems, onChange }: FieldProps) {
  const obj = (value ?? {}) as Record<string, Json>;
  const mine = problems.filter((p) => p.path === path);
  const errId = `${useId()}-err`;
  const entries = Object.entries(schema.properties ?? {}).filter(([k]) => !(path === '' && JSON_ONLY.has(k)));
  const body = (
    <>
      <Errors id={errId} problems={mine} />
      <div className="fields">
        {entries.map(([k, p]) => (
          <SchemaField
            key={k}
            schema={p}
            value={obj[k]}
            path={childPath(path, k)}
            keys={[...keys, k]}
            label={k}
            problems={problems}
            onChange={onChange}
          />
        ))}
      </div>
    </>
  );
  if (path === '') return body;
  const nested = problems.some((p) => p.path.startsWith(path));
  // Optional sub-objects (net, disk, costs, guest, params) start folded unless they hold an error.
  return (
    <details
      className={`object-field${mine.length > 0 ? ' invalid' : ''}`}
      open={nested || keys.length <= 2 || undefined}
    >
      <summary title={schema.description}>{label}</summary>
      {body}
    </details>
  );
}

function itemName(v: Json | undefined, i: number): string {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const name = v.name ?? v.id;
    if (typeof name === 'string') return name;
  }
  return `#${i + 1}`;
}

/** Lists longer than this render only the items in view. */
export const VIRTUAL_FROM = 24;
/** A list item's height before it is measured [px]: a folded domain or variant with its Remove button. */
const ITEM_ESTIMATE_PX = 120;
/** Items rendered beyond each edge of the view, so a quick scroll shows no blank. */
const OVERSCAN = 3;

/**
 * The items of a long list that are in view of the nearest `data-scroll-root` ancestor, measured as they render
 * (their heights differ and change as sections open). The item holding the focus stays rendered when scrolled
 * away, so typing is never cut off.
 */
function VirtualItems({ count, render }: { count: number; render: (i: number) => ReactNode }) {
  const listRef = useRef<HTMLDivElement>(null);
  /** Where the list starts in the scroll box's content [px]. */
  const [margin, setMargin] = useState(0);
  const [focused, setFocused] = useState<number | null>(null);
  // The content above the list (other fields, sections opened or folded) moves it: placed once mounted and again
  // on every scroll (until then, the overscan covers a small shift).
  const place = useCallback(() => {
    const list = listRef.current;
    const root = list?.closest<HTMLElement>('[data-scroll-root]');
    if (!list || !root) return;
    const top = Math.round(
      list.getBoundingClientRect().top - root.getBoundingClientRect().top + root.scrollTop,
    );
    setMargin((m) => (Math.abs(top - m) >= 1 ? top : m));
  }, []);
  useLayoutEffect(place, [place]);
  // The virtualizer's functions are used within this render only; nothing of it is memoised.
  // eslint-disable-next-line react-hooks/incompatible-library
  const v = useVirtualizer({
    count,
    getScrollElement: () => listRef.current?.closest<HTMLElement>('[data-scroll-root]') ?? null,
    estimateSize: () => ITEM_ESTIMATE_PX,
    overscan: OVERSCAN,
    scrollMargin: margin,
    onChange: place,
    rangeExtractor: (range: Range) => {
      const shown = defaultRangeExtractor(range);
      return focused === null || focused >= count || shown.includes(focused)
        ? shown
        : [...shown, focused].sort((a, b) => a - b);
    },
  });
  return (
    <div ref={listRef} className="virtual-list" style={{ height: v.getTotalSize() }}>
      {v.getVirtualItems().map((item) => (
        <div
          className="array-item"
          key={item.key}
          data-index={item.index}
          ref={v.measureElement}
          style={{ transform: `translateY(${item.start - margin}px)` }}
          onFocus={() => setFocused(item.index)}
        >
          {render(item.index)}
        </div>
      ))}
    </div>
  );
}

function ArrayField({ schema, value, path, keys, label, problems, onChange }: FieldProps) {
  const list = Array.isArray(value) ? value : [];
  const mine = problems.filter((p) => p.path === path);
  const errId = `${useId()}-err`;
  const one = singular(label);
  // The test id keeps the first form's plain "s"-less spelling ("add-policie"): test ids are never renamed.
  const testId = `add-${label.replace(/s$/, '')}`;
  const item = (i: number) => (
    <>
      <SchemaField
        schema={schema.items!}
        value={list[i]}
        path={childPath(path, i)}
        keys={[...keys, i]}
        label={`${one} ${itemName(list[i], i)}`}
        problems={problems}
        onChange={onChange}
      />
      <button
        type="button"
        className="remove-item"
        onClick={() => onChange([...keys, i], undefined)}
        aria-label={`Remove ${one} ${itemName(list[i], i)}`}
      >
        Remove
      </button>
    </>
  );
  return (
    <fieldset className={`array-field${mine.length > 0 ? ' invalid' : ''}`} data-path={path}>
      <legend title={schema.description}>
        {label} ({list.length})
      </legend>
      <Errors id={errId} problems={mine} />
      {list.length > VIRTUAL_FROM ? (
        <VirtualItems count={list.length} render={item} />
      ) : (
        list.map((_, i) => (
          <div className="array-item" key={i}>
            {item(i)}
          </div>
        ))
      )}
      <button
        type="button"
        className="add-item"
        data-testid={testId}
        onClick={() =>
          onChange([...keys, list.length], freshItem(schema.items!, `${one.slice(0, 8)}${list.length + 1}`))
        }
      >
        + Add {one}
      </button>
    </fieldset>
  );
}
