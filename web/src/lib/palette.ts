// Okabe-Ito: distinguishable under the common colour-vision deficiencies.
export const OKABE_ITO = [
  '#E69F00', // orange
  '#56B4E9', // sky blue
  '#009E73', // bluish green
  '#0072B2', // blue
  '#D55E00', // vermillion
  '#CC79A7', // reddish purple
  '#F0E442', // yellow (last among the colours: weakest contrast on white)
  '#000000', // black
] as const;

/**
 * The palette on a dark background: Okabe-Ito's black is next to invisible there, so it becomes a light grey
 * (the palette's other hues read on both backgrounds).
 */
export const OKABE_ITO_DARK = [...OKABE_ITO.slice(0, 7), '#D4D4D4'] as const;

/** `hex` mixed with `toward` (0 = unchanged, 1 = all `toward`), as #rrggbb. */
function mix(hex: string, toward: readonly [number, number, number], k: number): string {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `#${c
    .map((v, i) =>
      Math.round(v + (toward[i]! - v) * k)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/**
 * A domain's colour: the palette's eight hues for the first eight domains, then the same hues darker (9-16) and
 * lighter (17-24), so that a host of up to 24 domains never shows two domains in one colour. (Hovering names a
 * domain either way.)
 */
export function domainColor(colorIndex: number, dark = false): string {
  const palette = dark ? OKABE_ITO_DARK : OKABE_ITO;
  const n = palette.length;
  const i = Math.trunc(colorIndex);
  const hue = palette[((i % n) + n) % n]!;
  const round = Math.floor((((i % (3 * n)) + 3 * n) % (3 * n)) / n);
  if (round === 0) return hue;
  // Black and the dark theme's grey have no darker shade worth having: they go mid-grey and lighter instead.
  const grey = hue === '#000000' || hue === '#D4D4D4';
  if (round === 1) return grey ? '#6e6e6e' : mix(hue, [0, 0, 0], 0.4);
  return grey ? '#a8a8a8' : mix(hue, [255, 255, 255], dark ? 0.45 : 0.5);
}
