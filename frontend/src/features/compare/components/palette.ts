/** One colour per machine, in the order the comparison lists them. */
const PALETTE = ['#0b5cad', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#1098ad', '#5c940d', '#e67700'];

export function machineColour(index: number): string {
  return PALETTE[index % PALETTE.length]!;
}
