// The hover box every view uses to say what a mark is. Positioned inside the view's plot (which is
// `position: relative`), kept inside its width.
export interface Hover {
  /** Pointer position inside the plot [px]. */
  readonly x: number;
  readonly y: number;
  readonly lines: readonly string[];
}

/** Widest the box is assumed to be when keeping it inside the plot [px]. */
const BOX_W = 260;

export function Tooltip({ hover, width }: { hover: Hover | null; width: number }) {
  if (!hover) return null;
  return (
    <div
      className="tooltip"
      data-testid="tooltip"
      role="tooltip"
      style={{ left: Math.min(hover.x + 12, Math.max(0, width - BOX_W)), top: hover.y + 12 }}
    >
      {hover.lines.map((l, i) => (
        <div key={i}>{l}</div>
      ))}
    </div>
  );
}
