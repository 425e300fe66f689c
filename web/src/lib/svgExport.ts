// Vector exports: a view on screen as a standalone SVG a vector tool or LaTeX can use. The view's own
// SVG charts are copied with their computed styles inlined (so fills are the screen's, never the default black);
// a canvas whose component registered a vector drawing (the timeline: its window's segments as rectangles) is
// redrawn as shapes; the view's HTML (labels, legends, tables, badges) becomes `rect` and `text` at the places the
// browser laid them out. No `foreignObject`, no embedded bitmaps except a canvas nobody can redraw.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Draws a canvas's content as SVG markup in the canvas's own CSS-pixel coordinates. */
export type VectorDrawing = () => string;

const drawings = new WeakMap<Element, VectorDrawing>();

/** Lets the SVG export redraw `canvas` as shapes; returns the unregistration. */
export function registerVector(canvas: Element, draw: VectorDrawing): () => void {
  drawings.set(canvas, draw);
  return () => {
    if (drawings.get(canvas) === draw) drawings.delete(canvas);
  };
}

/** XML-escapes text and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One rectangle of SVG markup (rounded to 0.01 px: exports stay small). */
export function rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): string {
  const r = (v: number) => Math.round(v * 100) / 100;
  return `<rect x="${r(x)}" y="${r(y)}" width="${r(w)}" height="${r(h)}" fill="${esc(fill)}"${extra}/>`;
}

/** Presentation properties inlined on copied SVG elements. */
const SVG_STYLE = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-opacity',
  'stroke-dasharray',
  'stroke-linecap',
  'stroke-linejoin',
  'opacity',
  'font-family',
  'font-size',
  'font-weight',
  'font-style',
  'text-anchor',
  'dominant-baseline',
  'visibility',
  'display',
] as const;

function transparent(color: string): boolean {
  return color === '' || color === 'transparent' || /rgba\([^)]*,\s*0\)$/.test(color);
}

/** A copy of an on-screen SVG with every element's computed presentation inlined. */
function copySvg(src: SVGSVGElement, x: number, y: number): string {
  const copy = src.cloneNode(true) as SVGSVGElement;
  const from = [src, ...src.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((node, i) => {
    const cs = getComputedStyle(node);
    const target = to[i]!;
    target.removeAttribute('class');
    target.setAttribute('style', SVG_STYLE.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';'));
  });
  // `foreignObject` never leaves: it is what vector tools cannot read.
  for (const f of copy.querySelectorAll('foreignObject')) f.remove();
  const box = src.getBoundingClientRect();
  copy.setAttribute('x', String(x));
  copy.setAttribute('y', String(y));
  copy.setAttribute('width', String(box.width));
  copy.setAttribute('height', String(box.height));
  if (!copy.hasAttribute('viewBox')) copy.setAttribute('viewBox', `0 0 ${box.width} ${box.height}`);
  copy.removeAttribute('xmlns');
  return new XMLSerializer().serializeToString(copy).replace(/ xmlns="[^"]*"/, '');
}

/** A canvas as shapes when its component drew it for us, else as an embedded bitmap. */
function copyCanvas(canvas: HTMLCanvasElement, x: number, y: number): string {
  const box = canvas.getBoundingClientRect();
  const draw = drawings.get(canvas);
  if (draw) return `<g transform="translate(${x} ${y})">${draw()}</g>`;
  let href: string;
  try {
    href = canvas.toDataURL('image/png');
  } catch {
    return '';
  }
  return `<image x="${x}" y="${y}" width="${box.width}" height="${box.height}" href="${href}"/>`;
}

/** The text of an element's own text nodes, one `text` per laid-out line box. */
function textOf(el: Element, origin: DOMRect): string {
  const cs = getComputedStyle(el);
  if (cs.visibility === 'hidden' || transparent(cs.color)) return '';
  let out = '';
  for (const node of el.childNodes) {
    if (node.nodeType !== Node.TEXT_NODE) continue;
    const text = node.textContent ?? '';
    if (!text.trim()) continue;
    // Line by line: a range over each word would be exact but large; one per line box is close enough.
    const range = document.createRange();
    range.selectNodeContents(node);
    const lines = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    if (lines.length === 0) continue;
    // Collapse as HTML does: ordinary white space only (a no-break space is kept). A space at either end stays
    // when the layout gave it width ("Paper: Fig.", "(fair 14.3%)" span two nodes); one at a line's edge has none.
    const edge = (at: number) => {
      const r = document.createRange();
      r.setStart(node, at);
      r.setEnd(node, at + 1);
      return r.getBoundingClientRect().width > 0;
    };
    let collapsed = text.replace(/[ \t\n\r]+/g, ' ');
    if (collapsed.startsWith(' ') && !edge(0)) collapsed = collapsed.slice(1);
    if (collapsed.endsWith(' ') && !edge(text.length - 1)) collapsed = collapsed.slice(0, -1);
    const words = transform(collapsed, cs.textTransform);
    const parts =
      lines.length === 1
        ? [words]
        : splitLines(node as Text, lines).map((p) => transform(p, cs.textTransform));
    lines.forEach((line, i) => {
      const part = parts[i];
      if (!part) return;
      const size = parseFloat(cs.fontSize) || 12;
      const baseline = line.top - origin.top + (line.height + size * 0.7) / 2;
      out +=
        `<text x="${(line.left - origin.left).toFixed(2)}" y="${baseline.toFixed(2)}" fill="${esc(cs.color)}"` +
        ` font-family="${esc(cs.fontFamily)}" font-size="${cs.fontSize}" font-weight="${cs.fontWeight}"` +
        `${cs.fontStyle !== 'normal' ? ` font-style="${cs.fontStyle}"` : ''}` +
        ` textLength="${line.width.toFixed(2)}" lengthAdjust="spacingAndGlyphs" xml:space="preserve">` +
        `${esc(part)}</text>`;
    });
  }
  return out;
}

/** CSS `text-transform`, which SVG text does not have. */
function transform(text: string, how: string): string {
  if (how === 'uppercase') return text.toUpperCase();
  if (how === 'lowercase') return text.toLowerCase();
  return text;
}

/** The words of a wrapped text node, split where its line boxes break. */
function splitLines(node: Text, lines: DOMRect[]): string[] {
  const text = node.textContent ?? '';
  const parts: string[] = lines.map(() => '');
  const range = document.createRange();
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (j < text.length && !/\s/.test(text[j]!)) j++;
    if (j > i) {
      range.setStart(node, i);
      range.setEnd(node, j);
      const r = range.getBoundingClientRect();
      const mid = r.top + r.height / 2;
      let k = lines.findIndex((l) => mid >= l.top && mid <= l.bottom);
      if (k < 0) k = 0;
      parts[k] = parts[k] ? `${parts[k]} ${text.slice(i, j)}` : text.slice(i, j);
    }
    i = j + 1;
  }
  return parts;
}

/** An element's box: its background and its borders (as a stroke when all four match, else as bars). */
function boxOf(el: Element, origin: DOMRect): string {
  const cs = getComputedStyle(el);
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return '';
  const x = r.left - origin.left;
  const y = r.top - origin.top;
  let out = '';
  const radius = parseFloat(cs.borderTopLeftRadius) || 0;
  const rounded = radius > 0 ? ` rx="${Math.min(radius, r.height / 2, r.width / 2)}"` : '';
  if (!transparent(cs.backgroundColor)) out += rect(x, y, r.width, r.height, cs.backgroundColor, rounded);
  const sides = [
    ['Top', x, y, r.width, 'h'],
    ['Bottom', x, y + r.height, r.width, 'h'],
    ['Left', x, y, r.height, 'v'],
    ['Right', x + r.width, y, r.height, 'v'],
  ] as const;
  for (const [side, sx, sy, len, dir] of sides) {
    const w = parseFloat(cs.getPropertyValue(`border-${side.toLowerCase()}-width`)) || 0;
    const style = cs.getPropertyValue(`border-${side.toLowerCase()}-style`);
    const color = cs.getPropertyValue(`border-${side.toLowerCase()}-color`);
    if (w <= 0 || style === 'none' || style === 'hidden' || transparent(color)) continue;
    const bx = side === 'Right' ? sx - w : sx;
    const by = side === 'Bottom' ? sy - w : sy;
    out += dir === 'h' ? rect(bx, by, len, w, color) : rect(bx, by, w, len, color);
  }
  return out;
}

/** Whether the element is laid out and visible. */
function shown(el: Element): boolean {
  const cs = getComputedStyle(el);
  return cs.display !== 'none' && cs.visibility !== 'hidden' && cs.contentVisibility !== 'hidden';
}

/**
 * Whether the element is one of the page's controls rather than the figure's content: a figure on paper has no
 * checkboxes, nor the labels that toggle them (`data-no-export` marks such a part).
 */
function control(el: Element): boolean {
  if (el.hasAttribute('data-no-export')) return true;
  if (el instanceof HTMLInputElement) return el.type === 'checkbox' || el.type === 'radio';
  return (
    el instanceof HTMLLabelElement && el.querySelector('input[type="checkbox"], input[type="radio"]') !== null
  );
}

/** Walks the view: boxes behind, then SVGs, canvases and text, in document order. */
function walk(el: Element, origin: DOMRect, out: string[]): void {
  if (!shown(el) || control(el)) return;
  const r = el.getBoundingClientRect();
  const x = r.left - origin.left;
  const y = r.top - origin.top;
  if (el instanceof SVGSVGElement) {
    out.push(copySvg(el, x, y));
    return;
  }
  if (el instanceof HTMLCanvasElement) {
    out.push(copyCanvas(el, x, y));
    return;
  }
  // Form controls: their box and their shown value.
  if (el instanceof HTMLSelectElement || el instanceof HTMLInputElement) {
    out.push(boxOf(el, origin));
    const value = el instanceof HTMLSelectElement ? (el.selectedOptions[0]?.textContent ?? '') : el.value;
    if (el instanceof HTMLSelectElement || el.type === 'text' || el.type === 'number') {
      const cs = getComputedStyle(el);
      out.push(
        `<text x="${(x + 4).toFixed(2)}" y="${(y + r.height / 2 + parseFloat(cs.fontSize) * 0.35).toFixed(2)}"` +
          ` fill="${esc(cs.color)}" font-family="${esc(cs.fontFamily)}" font-size="${cs.fontSize}">${esc(value)}</text>`,
      );
    }
    return;
  }
  out.push(boxOf(el, origin));
  out.push(textOf(el, origin));
  if (el.children.length === 0) return;
  // A scrolled box (the event log, wide tables) shows only what is inside it.
  const cs = getComputedStyle(el);
  const clip = cs.overflowX !== 'visible' || cs.overflowY !== 'visible';
  if (clip) {
    const id = `clip${++clips}`;
    out.push(
      `<clipPath id="${id}">${rect(x, y, r.width, r.height, '#000')}</clipPath><g clip-path="url(#${id})">`,
    );
  }
  for (const child of el.children) walk(child, origin, out);
  if (clip) out.push('</g>');
}

let clips = 0;

/** Why a view has nothing to export (a belief chart of a policy that does not infer), or null. */
export function nothingToShow(el: HTMLElement): string | null {
  if (el.dataset.infers === 'false')
    return 'This column’s policy does not infer task types: its belief chart has nothing to show.';
  if (!el.querySelector('svg, canvas') && !(el.textContent ?? '').trim()) return 'This view is empty.';
  return null;
}

/**
 * The box a view's content covers, relative to the view: its children's boxes and its charts' labels, which
 * may stick out of their SVG (a right-hand tick label) or leave the view's box half empty (a chart in a grid
 * cell as tall as the table beside it). Content inside a scrolled box counts as that box.
 */
function contentBox(el: HTMLElement): { width: number; height: number } {
  const origin = el.getBoundingClientRect();
  let right = 0;
  let bottom = 0;
  const visit = (node: Element) => {
    if (!shown(node) || control(node)) return;
    const r = node.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) {
      right = Math.max(right, r.right - origin.left);
      bottom = Math.max(bottom, r.bottom - origin.top);
    }
    const cs = getComputedStyle(node);
    if (node !== el && (cs.overflowX !== 'visible' || cs.overflowY !== 'visible')) return;
    for (const c of node.children) visit(c);
  };
  for (const c of el.children) visit(c);
  const pad = 6;
  return {
    width: Math.ceil(Math.max(right, 1) + pad),
    height: Math.ceil(Math.max(bottom, 1) + pad),
  };
}

/**
 * Export sizes: as on screen, twice that, or a one-column figure of an A4 paper (85 mm) at 300 dpi, laid out
 * for it first (`paperLayout`).
 */
export const EXPORT_SIZES = {
  column: { label: 'column width', scale: () => 1 },
  '2x': { label: '2x', scale: () => 2 },
  a4: {
    label: 'A4 column (85 mm) at 300 dpi, text 8 pt or more',
    scale: (width: number) => ((85 / 25.4) * 300) / width,
  },
} as const;
export type ExportSize = keyof typeof EXPORT_SIZES;

/** A one-column figure's width on paper, 85 mm, in CSS pixels (96 to the inch). */
export const PAPER_COLUMN_PX = Math.round((85 / 25.4) * 96);
/** The smallest text a paper figure has, 8 pt, in CSS pixels, rounded up. */
export const PAPER_TEXT_PX = 11;

/**
 * Lays a view out as a one-column paper figure until the returned function undoes it: the view at 85 mm wide
 * (its charts redraw at that width as they do on a resize) and no text under 8 pt, so that the figure scaled to
 * a column keeps its text readable. A view on screen is wider than a column with smaller type; scaling it down
 * would take its 9-12 px labels to 3-5 pt.
 */
export async function paperLayout(el: HTMLElement): Promise<() => void> {
  const style = el.getAttribute('style');
  const raised: [HTMLElement | SVGElement, string][] = [];
  // A view skipped by `content-visibility: auto` (off screen behind the export panel) gets no resize: drawn for
  // the export, it and its ancestors are kept visible until it is done.
  const shownWas: [HTMLElement, string][] = [];
  for (let p: HTMLElement | null = el; p; p = p.parentElement) {
    if (getComputedStyle(p).contentVisibility === 'auto') {
      shownWas.push([p, p.style.contentVisibility]);
      p.style.contentVisibility = 'visible';
    }
  }
  el.classList.add('paper-export');
  el.style.width = `${PAPER_COLUMN_PX}px`;
  el.style.maxWidth = `${PAPER_COLUMN_PX}px`;
  el.style.flex = 'none';
  const settle = async () => {
    // A resize reaches the charts through a ResizeObserver and a render, and a redraw may wait on the simulator's
    // worker: frames until the content fits the column and stays put (5 s at most), then a little more.
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
    const started = performance.now();
    let last = -1;
    let stable = 0;
    for (;;) {
      await frame();
      const w = contentBox(el).width;
      stable = w === last ? stable + 1 : 0;
      last = w;
      if ((w <= PAPER_COLUMN_PX + 8 && stable >= 1) || stable >= 30 || performance.now() - started > 5000)
        break;
    }
    await new Promise((r) => setTimeout(r, 100));
  };
  await settle();
  // A view that cannot get that narrow (a chart that keeps its drawn width) scales to the column as it is: its
  // smallest text is raised in proportion, so that it is 8 pt once scaled.
  for (let pass = 0; pass < 2; pass++) {
    const least = Math.ceil(
      (PAPER_TEXT_PX * Math.max(PAPER_COLUMN_PX, contentBox(el).width)) / PAPER_COLUMN_PX,
    );
    let changed = false;
    for (const e of el.querySelectorAll<HTMLElement | SVGElement>('*')) {
      if (parseFloat(getComputedStyle(e).fontSize) < least) {
        if (!raised.some(([r]) => r === e)) raised.push([e, e.style.fontSize]);
        e.style.fontSize = `${least}px`;
        changed = true;
      }
    }
    if (!changed) break;
    await settle();
  }
  return () => {
    for (const [e, was] of raised) e.style.fontSize = was;
    el.classList.remove('paper-export');
    for (const [p, was] of shownWas) p.style.contentVisibility = was;
    if (style === null) el.removeAttribute('style');
    else el.setAttribute('style', style);
  };
}

/** `text` in lines no wider than `width` at `font` (a word longer than that gets a line of its own). */
function wrap(text: string, font: string, width: number): { lines: string[]; widest: number } {
  const measure = document.createElement('canvas').getContext('2d');
  if (measure) measure.font = font;
  const w = (t: string) => measure?.measureText(t).width ?? t.length * 7;
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && w(`${last} ${word}`) <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return { lines, widest: Math.max(0, ...lines.map(w)) };
}

/** Lines of text at (4, `top` + a baseline per line), `size` px; returns the markup and its height. */
function textLines(
  lines: readonly string[],
  top: number,
  size: number,
  style: { color: string; family: string; weight?: string },
  extra = '',
): { markup: string; height: number } {
  const step = Math.round(size * 1.3);
  const markup = lines
    .map(
      (l, i) =>
        `<text x="4" y="${top + size + i * step}" fill="${esc(style.color)}" font-family="${esc(style.family)}"` +
        ` font-size="${size}px"${style.weight ? ` font-weight="${style.weight}"` : ''}${extra}>${esc(l)}</text>`,
    )
    .join('');
  return { markup, height: lines.length === 0 ? 0 : size + (lines.length - 1) * step + 8 };
}

/**
 * One view drawn in its content box, with a caption under it: on one line that may widen the drawing, or (`wrap`,
 * for a paper column, whose width is fixed) wrapped to the view's width.
 */
function drawView(
  el: HTMLElement,
  caption: string,
  wrapCaption = false,
): { markup: string; width: number; height: number } {
  const origin = el.getBoundingClientRect();
  const box = contentBox(el);
  const parts: string[] = [];
  walk(el, origin, parts);
  const cs = getComputedStyle(el);
  const size = 13;
  const font = `${size}px ${cs.fontFamily}`;
  const lines = !caption
    ? { lines: [], widest: 0 }
    : wrapCaption
      ? wrap(caption, font, box.width - 12)
      : wrap(caption, font, Infinity);
  // The caption stays inside the frame: a line wider than the view widens the drawing rather than being cut.
  const width = Math.ceil(Math.max(box.width, lines.widest ? lines.widest + 12 : 0));
  const text = textLines(
    lines.lines,
    box.height + 2,
    size,
    { color: cs.color, family: cs.fontFamily },
    ' data-caption=""',
  );
  const id = `view${++clips}`;
  const markup =
    `<clipPath id="${id}">${rect(0, 0, box.width, box.height, '#000')}</clipPath>` +
    `<g clip-path="url(#${id})">${parts.join('')}</g>` +
    text.markup;
  return { markup, width, height: box.height + (lines.lines.length > 0 ? text.height + 2 : 0) };
}

function background(el: HTMLElement): string {
  let bg = getComputedStyle(el).backgroundColor;
  for (let p: Element | null = el; p && transparent(bg); p = p.parentElement)
    bg = getComputedStyle(p).backgroundColor;
  if (transparent(bg)) bg = getComputedStyle(document.body).backgroundColor || '#ffffff';
  return transparent(bg) ? '#ffffff' : bg;
}

function document_(width: number, height: number, bg: string, body: string, scale = 1): string {
  // The size a document asks for is the chosen one; its coordinates stay the screen's (a vector scales).
  const w = Math.round(width * scale);
  const h = Math.round(height * scale);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<svg xmlns="${SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink" width="${w}" height="${h}"` +
    ` viewBox="0 0 ${width} ${height}">` +
    rect(0, 0, width, height, bg) +
    body +
    '</svg>\n'
  );
}

/**
 * A view on screen as a standalone SVG document (see the header), cropped to its content, with `caption`
 * (the policy and scenario it shows) under it, at `scale` times its size on screen.
 */
export function viewToSvg(el: HTMLElement, caption = '', size: ExportSize = 'column'): string {
  const v = drawView(el, caption, size === 'a4');
  return document_(v.width, v.height, background(el), v.markup, EXPORT_SIZES[size].scale(v.width));
}

/**
 * Views in one SVG (a figure of every column's view), each with its caption, under a title: side by side, or for
 * a paper column (`a4`, each view laid out at the column's width) one under the other.
 */
export function figureToSvg(
  views: readonly { readonly el: HTMLElement; readonly caption: string }[],
  title: string,
  size: ExportSize = 'column',
): string {
  const gap = 16;
  const stacked = size === 'a4';
  const drawn = views.map(({ el, caption }) => drawView(el, caption, stacked));
  const first = views[0]?.el;
  const cs = first ? getComputedStyle(first) : null;
  const style = { color: cs?.color ?? '#000', family: cs?.fontFamily ?? 'sans-serif', weight: '600' };
  const across = stacked
    ? Math.max(1, ...drawn.map((v) => v.width))
    : Math.max(
        1,
        drawn.reduce((w, v) => w + v.width + gap, -gap),
      );
  // The title stays inside the frame: wrapped to a paper column, else widening the figure.
  const font = `600 15px ${style.family}`;
  const lines = !title ? { lines: [], widest: 0 } : wrap(title, font, stacked ? across - 12 : Infinity);
  const head = textLines(lines.lines, 0, 15, style);
  const top = title ? head.height + 4 : 0;
  const body: string[] = [];
  let x = 0;
  let y = top;
  let height = 0;
  for (const v of drawn) {
    body.push(`<g transform="translate(${x} ${y})">${v.markup}</g>`);
    if (stacked) y += v.height + gap;
    else x += v.width + gap;
    height = stacked ? y - gap - top : Math.max(height, v.height);
  }
  const width = Math.ceil(Math.max(across, lines.widest ? lines.widest + 12 : 0));
  const bg = first ? background(first) : '#ffffff';
  return document_(width, height + top, bg, head.markup + body.join(''), EXPORT_SIZES[size].scale(width));
}

/** Renders an SVG document to a PNG at `scale` times its size (what the PNG export saves). */
export async function svgToPng(svg: string, scale = 2): Promise<Blob> {
  const m = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
  const w = Number(m?.[1] ?? 300);
  const h = Number(m?.[2] ?? 150);
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'sync';
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error('the SVG did not render'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(w * scale));
    canvas.height = Math.max(1, Math.round(h * scale));
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, w, h);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be encoded'))), 'image/png'),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

interface PenState {
  fillStyle: string;
  strokeStyle: string;
  lineWidth: number;
  font: string;
  textAlign: CanvasTextAlign;
  textBaseline: CanvasTextBaseline;
  globalAlpha: number;
  dash: number[];
  tx: number;
  ty: number;
}

/**
 * The part of a 2D canvas context that the views' drawing functions use, recording SVG instead of pixels: the
 * same function that paints a canvas (e.g. a run queue row) draws its vector export.
 */
export class SvgRecorder {
  private out: string[] = [];
  private path: string[] = [];
  private stack: PenState[] = [];
  private s: PenState = {
    fillStyle: '#000',
    strokeStyle: '#000',
    lineWidth: 1,
    font: '10px sans-serif',
    textAlign: 'start',
    textBaseline: 'alphabetic',
    globalAlpha: 1,
    dash: [],
    tx: 0,
    ty: 0,
  };
  private measurer: CanvasRenderingContext2D | null = null;

  get fillStyle(): string {
    return this.s.fillStyle;
  }
  set fillStyle(v: string) {
    this.s.fillStyle = v;
  }
  get strokeStyle(): string {
    return this.s.strokeStyle;
  }
  set strokeStyle(v: string) {
    this.s.strokeStyle = v;
  }
  get lineWidth(): number {
    return this.s.lineWidth;
  }
  set lineWidth(v: number) {
    this.s.lineWidth = v;
  }
  get font(): string {
    return this.s.font;
  }
  set font(v: string) {
    this.s.font = v;
  }
  get textAlign(): CanvasTextAlign {
    return this.s.textAlign;
  }
  set textAlign(v: CanvasTextAlign) {
    this.s.textAlign = v;
  }
  get textBaseline(): CanvasTextBaseline {
    return this.s.textBaseline;
  }
  set textBaseline(v: CanvasTextBaseline) {
    this.s.textBaseline = v;
  }
  get globalAlpha(): number {
    return this.s.globalAlpha;
  }
  set globalAlpha(v: number) {
    this.s.globalAlpha = v;
  }

  setLineDash(dash: number[]): void {
    this.s.dash = [...dash];
  }
  save(): void {
    this.stack.push({ ...this.s, dash: [...this.s.dash] });
  }
  restore(): void {
    this.s = this.stack.pop() ?? this.s;
  }
  translate(x: number, y: number): void {
    this.s.tx += x;
    this.s.ty += y;
  }
  setTransform(): void {}
  clearRect(): void {}
  beginPath(): void {
    this.path = [];
  }
  rect(x: number, y: number, w: number, h: number): void {
    this.roundRect(x, y, w, h, 0);
  }
  roundRect(x: number, y: number, w: number, h: number, radii: number | number[] = 0): void {
    const [tl, tr, br, bl] = Array.isArray(radii)
      ? [radii[0] ?? 0, radii[1] ?? radii[0] ?? 0, radii[2] ?? radii[0] ?? 0, radii[3] ?? radii[1] ?? 0]
      : [radii, radii, radii, radii];
    const X = x + this.s.tx;
    const Y = y + this.s.ty;
    const n = (v: number) => Math.round(v * 100) / 100;
    this.path.push(
      `M${n(X + tl)} ${n(Y)}H${n(X + w - tr)}${tr ? `A${tr} ${tr} 0 0 1 ${n(X + w)} ${n(Y + tr)}` : ''}` +
        `V${n(Y + h - br)}${br ? `A${br} ${br} 0 0 1 ${n(X + w - br)} ${n(Y + h)}` : ''}` +
        `H${n(X + bl)}${bl ? `A${bl} ${bl} 0 0 1 ${n(X)} ${n(Y + h - bl)}` : ''}` +
        `V${n(Y + tl)}${tl ? `A${tl} ${tl} 0 0 1 ${n(X + tl)} ${n(Y)}` : ''}Z`,
    );
  }
  fillRect(x: number, y: number, w: number, h: number): void {
    this.out.push(rect(x + this.s.tx, y + this.s.ty, w, h, this.s.fillStyle, this.alpha()));
  }
  fill(): void {
    if (this.path.length === 0) return;
    this.out.push(`<path d="${this.path.join('')}" fill="${esc(this.s.fillStyle)}"${this.alpha()}/>`);
  }
  stroke(): void {
    if (this.path.length === 0) return;
    const dash = this.s.dash.length > 0 ? ` stroke-dasharray="${this.s.dash.join(' ')}"` : '';
    this.out.push(
      `<path d="${this.path.join('')}" fill="none" stroke="${esc(this.s.strokeStyle)}"` +
        ` stroke-width="${this.s.lineWidth}"${dash}${this.alpha()}/>`,
    );
  }
  measureText(text: string): TextMetrics {
    this.measurer ??= document.createElement('canvas').getContext('2d');
    if (!this.measurer) return { width: text.length * 6 } as TextMetrics;
    this.measurer.font = this.s.font;
    return this.measurer.measureText(text);
  }
  fillText(text: string, x: number, y: number, maxWidth?: number): void {
    const anchor =
      this.s.textAlign === 'center'
        ? 'middle'
        : this.s.textAlign === 'right' || this.s.textAlign === 'end'
          ? 'end'
          : 'start';
    const baseline =
      this.s.textBaseline === 'middle' ? 'central' : this.s.textBaseline === 'top' ? 'hanging' : 'alphabetic';
    const squeeze =
      maxWidth !== undefined && this.measureText(text).width > maxWidth
        ? ` textLength="${maxWidth}" lengthAdjust="spacingAndGlyphs"`
        : '';
    this.out.push(
      `<text x="${(x + this.s.tx).toFixed(2)}" y="${(y + this.s.ty).toFixed(2)}" fill="${esc(this.s.fillStyle)}"` +
        ` style="font:${esc(this.s.font)};white-space:pre" text-anchor="${anchor}" dominant-baseline="${baseline}"` +
        `${squeeze}${this.alpha()}>${esc(text)}</text>`,
    );
  }
  private alpha(): string {
    return this.s.globalAlpha < 1 ? ` opacity="${this.s.globalAlpha}"` : '';
  }
  /** What was drawn, as SVG markup. */
  markup(): string {
    return this.out.join('');
  }
}
