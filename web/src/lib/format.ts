// Number formatting for tables and tooltips: short, fixed significant digits, never "NaN".

export function fmt(v: number | undefined | null, digits = 3): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '–';
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 10 ** digits) return Math.round(v).toString();
  return Number(v.toPrecision(digits)).toString();
}

export function pct(v: number | undefined | null): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '–';
  return `${(v * 100).toFixed(1)}%`;
}

/** Playhead text: ms with one decimal, no grouping, so tests can parseFloat it. */
export function ms(v: number): string {
  return (Math.round(v * 10) / 10).toFixed(1);
}

/** A compact rendering of a claim's `values` (numbers, maps of numbers, arrays, anything JSON). */
export function formatValues(values: unknown): string {
  if (values === null || values === undefined) return '';
  if (typeof values === 'number') return fmt(values, 4);
  if (typeof values === 'string' || typeof values === 'boolean') return String(values);
  if (Array.isArray(values)) return values.map(formatValues).join(', ');
  if (typeof values === 'object') {
    return Object.entries(values as Record<string, unknown>)
      .map(
        ([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? `{${formatValues(v)}}` : formatValues(v)}`,
      )
      .join(', ');
  }
  return '';
}

/**
 * Splits a validation message listing several problems ("... (3 problems): a; b; c") into its head and items,
 * so the banner can show one problem per line. Other messages come back whole.
 */
export function splitProblems(message: string): { head: string; items: string[] } {
  const m = /^(.*\(\d+ problems\)):\s*(.*)$/s.exec(message);
  if (!m) return { head: message, items: [] };
  return { head: m[1]!, items: m[2]!.split('; ').filter((s) => s.trim() !== '') };
}

/** Text anchor that keeps an axis label at `px` inside a plot `width` wide. */
export function anchor(px: number, width: number): 'start' | 'middle' | 'end' {
  return px < 16 ? 'start' : px > width - 16 ? 'end' : 'middle';
}

/**
 * A claim's `values` as lines, one per top-level key: `{"credit": {"domains.io.cpu_share": 0.25}}` becomes
 * `credit: domains.io.cpu_share = 0.25`.
 */
export function claimValueLines(values: unknown): string[] {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    const text = formatValues(values);
    return text ? [text] : [];
  }
  return Object.entries(values as Record<string, unknown>).map(([key, v]) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const inner = Object.entries(v as Record<string, unknown>).map(
        ([path, x]) => `${path} = ${formatValues(x)}`,
      );
      return `${key}: ${inner.join(', ')}`;
    }
    return `${key} = ${formatValues(v)}`;
  });
}
