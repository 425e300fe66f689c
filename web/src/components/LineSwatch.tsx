/** A legend's sample of a line: its colour and dash, as drawn in the chart. */
export function LineSwatch({ color, dash, width = 26 }: { color: string; dash: string; width?: number }) {
  return (
    <svg width={width} height={10} aria-hidden="true">
      <line
        x1={1}
        x2={width - 1}
        y1={5}
        y2={5}
        stroke={color}
        strokeWidth={2.5}
        strokeDasharray={dash || undefined}
      />
    </svg>
  );
}
