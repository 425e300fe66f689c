// Okabe-Ito: distinguishable under the common colour-vision deficiencies (DESIGN.md 7, classroom).
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

export function domainColor(colorIndex: number, dark = false): string {
  const palette = dark ? OKABE_ITO_DARK : OKABE_ITO;
  const n = palette.length;
  return palette[((Math.trunc(colorIndex) % n) + n) % n]!;
}
