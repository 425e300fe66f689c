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

export function domainColor(colorIndex: number): string {
  const n = OKABE_ITO.length;
  return OKABE_ITO[((Math.trunc(colorIndex) % n) + n) % n]!;
}
