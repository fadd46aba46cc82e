import { lazy, Suspense, useCallback, useEffect, useRef } from 'react';
import { Loading } from '@/components/Feedback';
import { WhenNear } from '@/components/WhenNear';
import type { CompareResponse } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { compareToCsv, compareToJson, downloadBlob, exportName } from '@/lib/export';
import { viewToShare } from '@/lib/compare-query';
import { rowKey, rowWarning, warningText } from '../utils/table';
import { CompareTable } from './CompareTable';
import { FactsDiff } from './FactsDiff';
import { Heatmap } from './Heatmap';

// The charts (Recharts) are their own chunk: the table draws as soon as the numbers arrive, the
// charts a moment later.
const SweepCharts = lazy(() => import('./SweepCharts').then((m) => ({ default: m.SweepCharts })));
const Distribution = lazy(() => import('./Distribution').then((m) => ({ default: m.Distribution })));

function Exports({ data, view }: { data: CompareResponse; view: CompareView }) {
  return (
    <span className="exports">
      <button type="button" className="button button-small" data-testid="export-csv" onClick={() => downloadBlob(exportName('csv'), compareToCsv(data), 'text/csv')}>
        CSV
      </button>
      <button
        type="button"
        className="button button-small"
        data-testid="export-json"
        onClick={() => downloadBlob(exportName('json'), compareToJson(data, viewToShare(view)), 'application/json')}
      >
        JSON
      </button>
    </span>
  );
}

/**
 * The samples panel of the selected cell (`selectedKey`): focused when a click opens it, closed by its
 * button or Escape, the focus then back on what opened it.
 */
function useSamplesPanel(selectedKey: string | null, onView: (patch: Partial<CompareView>) => void) {
  // A median clicked in the table opens its samples below the whole table: bring them into view and
  // move the focus there (keyboard and screen-reader users land on what they asked for). Not on the
  // first draw: an address that already names a cell opens at the top, where the reader starts.
  const panel = useRef<HTMLElement>(null);
  const shownKey = useRef(selectedKey);
  // What opened the panel (a median, a heatmap cell) gets the focus back when it closes.
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (selectedKey === shownKey.current) return;
    shownKey.current = selectedKey;
    if (selectedKey === null || !panel.current) return;
    const active = document.activeElement;
    if (active instanceof HTMLElement && !panel.current.contains(active)) opener.current = active;
    panel.current.scrollIntoView({ block: 'start', behavior: 'auto' });
    panel.current.focus({ preventScroll: true });
  }, [selectedKey]);
  const close = useCallback(() => {
    onView({ cell: null });
    const back = opener.current;
    opener.current = null;
    if (back?.isConnected) back.focus({ preventScroll: false });
  }, [onView]);
  // Escape closes the panel from anywhere on the page, except where it already means something (a
  // field being edited, an open select).
  useEffect(() => {
    if (selectedKey === null) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      const t = e.target;
      if (t instanceof HTMLElement && t.closest('input, select, textarea, [contenteditable="true"]')) return;
      close();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [selectedKey, close]);
  return { panel, close };
}

/** Everything a comparison shows: the same on the live page and on a frozen share. */
/** A comparison drawn; `sharedFacts`: on a share, the host facts it carries. */
export function CompareBody(props: { data: CompareResponse; view: CompareView; onView: (patch: Partial<CompareView>) => void; sharedFacts?: string[] }) {
  const { data, view, onView, sharedFacts } = props;
  const loose = (data.warnings ?? []).filter((w) => !data.rows.some((r) => rowWarning(r, [w]) !== null));
  const selected = view.cell ? data.rows.find((r) => rowKey(r) === `${view.cell!.kernel}|${view.cell!.paramsKey}`) : undefined;
  const selectedKey = selected ? rowKey(selected) : null;
  const { panel, close } = useSamplesPanel(selectedKey, onView);
  return (
    <>
      {loose.length > 0 && (
        <div className="message message-warn" role="note" data-testid="compare-warnings">
          {loose.map((w, i) => (
            <div key={i}>{warningText(w)}</div>
          ))}
        </div>
      )}
      <h2 className="section-head">
        Results <span className="muted small">{data.rows.length} rows</span> <Exports data={data} view={view} />
      </h2>
      {data.rows.length === 0 ? (
        <p className="muted" data-testid="compare-empty">
          No results to compare yet: the chosen machines have no successful result for these kernels (run them from New run).
        </p>
      ) : (
        <CompareTable data={data} view={view} onView={onView} />
      )}
      {selected && (
        <section ref={panel} tabIndex={-1} className="distribution-panel" aria-label="Distribution of the selected cell (Escape closes it)" data-testid="distribution-panel">
          <h2>Distribution</h2>
          <Suspense fallback={<Loading what="the samples chart" />}>
            <Distribution data={data} row={selected} onClose={close} />
          </Suspense>
        </section>
      )}
      {data.rows.length > 0 && (
        <>
          <h2>Heatmap</h2>
          <Heatmap data={data} view={view} onView={onView} />
          <h2>Sweeps</h2>
          {/* The charts' code (Recharts, half the page's JS) is fetched when they come near the window. */}
          <WhenNear testId="sweeps" fallback={<p className="muted">The sweep charts are drawn as they come into view.</p>}>
            <Suspense fallback={<Loading what="the sweep charts" />}>
              <SweepCharts data={data} scale={view.scale} onScale={(scale) => onView({ scale })} />
            </Suspense>
          </WhenNear>
        </>
      )}
      <h2>What differs between the machines</h2>
      <FactsDiff data={data} shown={sharedFacts} />
    </>
  );
}

export default CompareBody;
