import { useCallback, useEffect, useRef } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { canCompare, useCompare } from '@/features/compare/api/compare';
import { CompareBody } from '@/features/compare/components/CompareBody';
import { PickAnother } from '@/features/compare/components/PickAnother';
import type { LabelMatch } from '@/features/compare/components/LabelFilter';
import { ComparePickers } from '@/features/compare/components/Pickers';
import { ShareBox } from '@/features/compare/components/ShareBox';
import { SidesPicker } from '@/features/compare/components/SidesPicker';
import { useKernels } from '@/features/kernels/api/kernels';
import { currentKernelIds } from '@/features/kernels/utils/catalog';
import { useMachines } from '@/features/machines/api/machines';
import { ApiError } from '@/lib/api-client';
import { decodeCompareView, encodeCompareView, type CompareView } from '@/lib/compare-query';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

/** The machine picker's label filter: the machines page's selector, matched by the server (null: none). */
function useLabelMatch(selector: string): LabelMatch | null {
  const matching = useMachines({ selector });
  if (!selector) return null;
  return { ids: matching.isPlaceholderData || !matching.data ? null : new Set(matching.data.map((m) => m.id)), error: matching.error };
}

/** The explorer's centre: machines side by side, kernel by kernel and sweep by sweep. The URL is the view. */
export function ComparePage() {
  useDocumentTitle('Compare');
  const [searchParams] = useSearchParams();
  const navigate = useNavigate();
  const view = decodeCompareView(searchParams);
  const machines = useMachines();
  const match = useLabelMatch(view.selector);
  const kernels = useKernels();
  const compare = useCompare(view);
  // Patches merge into the latest address, even two in one tick (a blur and a submit), and are written
  // with `navigate` so the address keeps its readable commas.
  const search = searchParams.toString();
  const latest = useRef(search);
  useEffect(() => {
    latest.current = search;
  }, [search]);
  const onView = useCallback(
    (patch: Partial<CompareView>) => {
      const qs = encodeCompareView({ ...decodeCompareView(latest.current), ...patch });
      latest.current = qs;
      // What is compared makes a history entry; sort, scale and the selected cell replace it.
      const replace = !('machines' in patch || 'kernels' in patch || 'baseline' in patch || 'runs' in patch || 'sides' in patch);
      void navigate({ search: qs ? `?${qs}` : '' }, { replace });
    },
    [navigate],
  );

  // A link naming an old kernel id (a renamed kernel; the server reads it too): the view under the new id.
  const current = kernels.data ? currentKernelIds(kernels.data, view.kernels) : view.kernels;
  if (current.join() !== view.kernels.join()) {
    const qs = encodeCompareView({ ...view, kernels: current });
    return <Navigate replace to={{ search: qs ? `?${qs}` : '' }} />;
  }

  const names = new Map([...(machines.data ?? []), ...(compare.data?.machines ?? [])].map((m) => [m.id, m.name]));
  const abMode = view.sides.length > 0 || view.ab !== null;
  const err = compare.error;
  const bad = err instanceof ApiError && (err.status === 404 || err.status === 422);
  return (
    <>
      <div className="page-head">
        <h1>Compare</h1>
        {compare.data && <ShareBox view={view} />}
      </div>
      <p className="lead">
        {abMode
          ? view.sides.length >= 2
            ? `${view.sides.map((x) => `${x.label} (${x.runs.length} run${x.runs.length === 1 ? '' : 's'})`).join(' vs ')}: runs of one machine side by side. The address bar is a live link to this view.`
            : 'Before and after on one machine: put its runs on side A or B, then compare them as machines are compared.'
          : view.machines.length > 0
            ? `${view.machines.map((id) => names.get(id) ?? id).join(' vs ')}${view.batch ? `, batch ${view.batch.slice(0, 8)}` : ''}. The address bar is a live link to this view.`
            : 'Pick two or more machines to see their results side by side.'}
      </p>
      {abMode && machines.data && <SidesPicker key={`${view.ab ?? ''}|${view.sides.map((x) => x.label).join(';')}`} machines={machines.data} view={view} onView={onView} />}
      {!abMode && machines.data && kernels.data && <ComparePickers machines={machines.data} kernels={kernels.data} view={view} onView={onView} match={match} />}
      {!abMode && view.machines.length === 1 && !view.batch && machines.data && <PickAnother machines={machines.data} view={view} onView={onView} />}
      {!abMode && (
        <p className="muted small">
          <button type="button" className="link-button" data-testid="ab-open" onClick={() => onView({ ab: view.machines[0] ?? machines.data?.[0]?.id ?? null })}>
            Compare runs of one machine (before / after)
          </button>
        </p>
      )}
      {!abMode && !canCompare(view) && view.machines.length !== 1 && (
        <p className="muted" data-testid="compare-prompt">
          Choose at least two machines above, or start from the{' '}
          <Link to={paths.machines}>machines page</Link>.
        </p>
      )}
      {canCompare(view) && compare.isPending && <Loading what="the comparison" />}
      {err && (
        <div data-testid="compare-error">
          <ErrorMessage title={bad ? 'Cannot compare:' : 'Could not load the comparison:'} error={err} />
          {bad && <p className="muted small">Change the machines or kernels above, or go back to the <Link to={paths.machines}>machines</Link>.</p>}
        </div>
      )}
      {compare.data && !err && <CompareBody data={compare.data} view={view} onView={onView} />}
    </>
  );
}

export default ComparePage;
