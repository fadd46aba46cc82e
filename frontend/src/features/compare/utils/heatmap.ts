// The heatmap's colour: log of the ratio to the baseline on a diverging scale, blue where a machine
// does better than the baseline, red where it does worse, white at parity.

/** ln(4): a ratio of 4 or 1/4 is full colour. */
export const HEAT_MAX_LOG = Math.log(4);

const BETTER: [number, number, number] = [33, 102, 172];
const WORSE: [number, number, number] = [178, 24, 43];
const WHITE: [number, number, number] = [247, 247, 247];

/** −1 (much better) … 0 (same) … 1 (much worse), from a ratio; null for no ratio. */
export function heatPosition(ratio: number | null | undefined, higherIsBetter = false, maxLog = HEAT_MAX_LOG): number | null {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio) || ratio <= 0) return null;
  const t = Math.log(ratio) / maxLog;
  const signed = higherIsBetter ? -t : t;
  return Math.max(-1, Math.min(1, signed));
}

function mix(a: [number, number, number], b: [number, number, number], t: number): string {
  const c = a.map((av, i) => Math.round(av + (b[i]! - av) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** The colour for a position in [−1, 1]; grey for no ratio. */
export function heatColour(position: number | null): string {
  if (position === null) return '#e4e7eb';
  return position < 0 ? mix(WHITE, BETTER, -position) : mix(WHITE, WORSE, position);
}

/** Ink that reads on the cell's colour. */
export function heatInk(position: number | null): string {
  return position !== null && Math.abs(position) > 0.6 ? '#ffffff' : '#1b1f24';
}

/** The legend's stops: ratios from 1/4 to 4 with their colours (for a lower-is-better unit). */
export function heatLegend(maxLog = HEAT_MAX_LOG): { ratio: number; colour: string }[] {
  return [-1, -0.5, 0, 0.5, 1].map((p) => ({ ratio: Math.exp(p * maxLog), colour: heatColour(p) }));
}

/** One colour per machine, in the order the comparison lists them. */
const PALETTE = ['#0b5cad', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#1098ad', '#5c940d', '#e67700'];

export function machineColour(index: number): string {
  return PALETTE[index % PALETTE.length]!;
}
