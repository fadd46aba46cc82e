// The distribution view of one cell: each machine's raw samples as an ECDF and as a strip plot.

/** The empirical CDF as steps: sorted values with the fraction of samples ≤ each. */
export function ecdf(samples: number[]): { x: number; y: number }[] {
  const xs = samples.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const n = xs.length;
  const out: { x: number; y: number }[] = [];
  xs.forEach((x, i) => {
    // Ties: one point at the highest fraction.
    if (i + 1 < n && xs[i + 1] === x) return;
    out.push({ x, y: (i + 1) / n });
  });
  return out;
}

/**
 * Strip-plot points: each sample at its value, with a small deterministic jitter across the band
 * (so the picture is the same on every load and in a share).
 */
export function stripPoints(samples: number[], band: number, width = 0.3): { x: number; y: number }[] {
  return samples
    .filter((v) => Number.isFinite(v))
    .map((x, i) => {
      // Golden-ratio sequence in [−0.5, 0.5).
      const j = ((i * 0.6180339887) % 1) - 0.5;
      return { x, y: band + j * width };
    });
}
