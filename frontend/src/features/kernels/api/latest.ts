import { useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
import { figureOf } from '@/lib/figure';

// GET /kernels/{id}/latest: every machine's latest result per point of a kernel, best first.

export interface RankedResult {
  machine_id: string;
  machine_name: string;
  result_id: string;
  run_id: string;
  at: string;
  median: number | null;
  /** The compared figure (lib/figure.ts), by which the server ranks; absent from an older server. */
  figure?: number | null;
  /** What the figure is: "median" or "p5". */
  figure_stat?: string;
  ci_low: number | null;
  ci_high: number | null;
  unit: string;
  n: number;
}

export interface RankedPoint {
  params_key: string;
  params: Record<string, unknown>;
  unit: string;
  higher_is_better: boolean;
  results: RankedResult[];
}

export function useKernelLatest(kernelId: string) {
  return useQuery({
    queryKey: ['kernels', kernelId, 'latest'],
    queryFn: ({ signal }) => apiGet<RankedPoint[]>(`/kernels/${encodeURIComponent(kernelId)}/latest`, signal),
    enabled: kernelId !== '',
  });
}

/**
 * Each result's figure against the point's best: ×1 for the best, ×2 for twice its cost or half its
 * throughput.
 */
export function versusBest(point: RankedPoint): (number | null)[] {
  const first = point.results[0];
  const best = first ? figureOf(first) : null;
  return point.results.map((r) => {
    const v = figureOf(r);
    if (v === null || !best) return null;
    return point.higher_is_better ? best / v : v / best;
  });
}
