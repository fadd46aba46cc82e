import { useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

// GET /history, /history/points and /changes (docs/architecture.md "History and change points").

export interface HistoryPoint {
  run_id: string;
  result_id: string;
  at: string;
  median: number;
  /** The compared figure (lib/figure.ts): the median for long samples, the p5 of the repetitions for short
   *  ones; ci_low and ci_high are its CI. Absent from an older server: the median stands in. */
  figure?: number;
  /** What the figure is: "median" or "p5". */
  figure_stat?: string;
  ci_low: number | null;
  ci_high: number | null;
  ci_method: string | null;
  n: number;
  n_launches: number;
  unit: string;
  agent_version: string | null;
  noisy: boolean;
  disturbance: number | null;
}

export interface FactChange {
  run_id: string;
  at: string;
  fact: string;
  before: unknown;
  after: unknown;
  hint: string | null;
}

export type StepRule = 'ci_excludes_noise' | 'ci_includes_1' | 'within_noise' | 'too_few_launches' | 'load_changed';

export interface Step {
  at: string;
  run_id: string;
  before_run_id: string;
  index: number;
  /** The median of the figures of the runs before (up to 10). */
  before: number;
  /** The median of the figures of the runs after (up to 10). */
  after: number;
  ratio: number;
  ci_low: number;
  ci_high: number;
  significant: boolean;
  significance: {
    significant: boolean;
    rule: StepRule;
    noise: number;
    noise_source: 'runs' | 'default';
    ci_level: number;
    runs: [number, number];
    /** [before, after]: the median share of the host's CPUs other processes kept busy; null: not known. */
    busy?: [number | null, number | null];
  };
  facts_changed: FactChange[];
}

export interface History {
  machine: { id: string; name: string };
  kernel: string;
  family: string;
  params_key: string;
  params: Record<string, unknown>;
  unit: string;
  truncated: boolean;
  points: HistoryPoint[];
  fact_changes: FactChange[];
  changes: Step[];
}

export interface PointKey {
  params_key: string;
  params: Record<string, unknown>;
  runs: number;
  last_at: string;
}

export interface FleetStep extends Step {
  machine_id: string;
  machine_name: string;
  kernel: string;
  params_key: string;
  params: Record<string, unknown>;
  unit: string;
}

export interface Changes {
  changes: FleetStep[];
  more: boolean;
  truncated: boolean;
}

export function useHistory(machine: string, kernel: string, params: string | null) {
  const q = new URLSearchParams({ machine, kernel });
  if (params !== null) q.set('params', params);
  return useQuery({
    queryKey: ['history', machine, kernel, params],
    queryFn: ({ signal }) => apiGet<History>(`/history?${q.toString()}`, signal),
    enabled: machine !== '' && kernel !== '',
    retry: false,
  });
}

export function useHistoryPoints(machine: string, kernel: string) {
  const q = new URLSearchParams({ machine, kernel });
  return useQuery({
    queryKey: ['history-points', machine, kernel],
    queryFn: ({ signal }) => apiGet<PointKey[]>(`/history/points?${q.toString()}`, signal),
    enabled: machine !== '' && kernel !== '',
  });
}

export function useChanges(all: boolean) {
  return useQuery({
    queryKey: ['changes', all],
    queryFn: ({ signal }) => apiGet<Changes>(`/changes?limit=100${all ? '&all=true' : ''}`, signal),
  });
}
