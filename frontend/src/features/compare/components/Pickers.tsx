import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Select } from '@/components/Form';
import { useRecentRuns } from '@/features/machines';
import { runsQuery } from '@/features/runs';
import { runKernels, type Kernel, type Machine } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { formatDateTime } from '@/lib/format';
import { toggleFamily } from '../utils/families';
import { LabelFilter, type LabelMatch } from './LabelFilter';

/** Per machine: its latest results, or the results of one chosen run. */
function RunPicker({ machine, view, onView }: { machine: Machine; view: CompareView; onView: (p: Partial<CompareView>) => void }) {
  const runs = useQuery({ ...runsQuery({ machine: machine.id, status: 'succeeded' }) });
  const list = runs.data ?? [];
  const chosen = list.find((r) => view.runs.includes(r.id))?.id ?? '';
  const onChange = (id: string) => {
    const mine = new Set(list.map((r) => r.id));
    const others = view.runs.filter((r) => !mine.has(r));
    onView({ runs: id ? [...others, id] : others });
  };
  return (
    <div className="field field-inline">
      <label htmlFor={`run-${machine.id}`}>{machine.name}</label>
      <Select
        id={`run-${machine.id}`}
        value={chosen}
        onChange={(e) => onChange(e.target.value)}
        data-testid="run-picker"
        options={[
          { value: '', label: 'latest results' },
          ...list.map((r) => ({ value: r.id, label: `${formatDateTime(r.finished_at ?? r.created_at)} · ${runKernels(r).slice(0, 3).join(', ')} (${r.id.slice(0, 8)})` })),
        ]}
      />
    </div>
  );
}

type OnView = (p: Partial<CompareView>) => void;

/** The machines to compare, those with a successful recent run first; the others say they have none yet.
 * A label selector narrows the list to the machines it matches (chosen ones stay, marked). */
function MachineChecks({ machines, view, onView, match }: { machines: Machine[]; view: CompareView; onView: OnView; match: LabelMatch | null }) {
  const chosen = view.machines;
  const recent = useRecentRuns();
  const measured = new Set((recent.data ?? []).filter((r) => r.status === 'succeeded').map((r) => r.machine_id));
  const ids = view.selector ? (match?.ids ?? null) : null;
  const shown = ids ? machines.filter((m) => ids.has(m.id) || chosen.includes(m.id)) : machines;
  const listed = recent.data ? [...shown].sort((a, b) => Number(measured.has(b.id)) - Number(measured.has(a.id))) : shown;
  const toggle = (id: string, on: boolean) => {
    const next = on ? [...chosen.filter((m) => m !== id), id] : chosen.filter((m) => m !== id);
    onView({ machines: next, baseline: view.baseline && next.includes(view.baseline) ? view.baseline : null });
  };
  return (
    <fieldset className="machine-picker">
      <legend>Machines (two or more)</legend>
      <LabelFilter view={view} onView={onView} match={match} total={machines.length} />
      {ids && shown.length === 0 && <p className="muted small">No machine has labels matching these.</p>}
      {listed.map((m) => (
        <div key={m.id} className="machine-option" data-testid="compare-machine-option">
          <input id={`cmp-${m.id}`} type="checkbox" checked={chosen.includes(m.id)} onChange={(e) => toggle(m.id, e.target.checked)} />
          <label htmlFor={`cmp-${m.id}`}>
            {m.name} <span className="muted small">{m.hostname}</span>
            {recent.data && !measured.has(m.id) && <span className="muted small"> · no results yet</span>}
            {ids && !ids.has(m.id) && <span className="muted small"> · chosen, not matching the labels</span>}
          </label>
        </div>
      ))}
    </fieldset>
  );
}

/** The kernels box (ids and family.* patterns, applied on submit or blur) and a chip per family. */
function KernelsForm({ kernels, view, onView }: { kernels: Kernel[]; view: CompareView; onView: OnView }) {
  const [kernelText, setKernelText] = useState(view.kernels.join(', '));
  // When the address's kernels change (Apply, the back button, a link) the box shows them.
  const urlKernels = view.kernels.join(', ');
  const [shown, setShown] = useState(urlKernels);
  if (shown !== urlKernels) {
    setShown(urlKernels);
    setKernelText(urlKernels);
  }
  const families = [...new Set(kernels.map((k) => k.family))].sort();
  const applyKernels = (e?: FormEvent) => {
    e?.preventDefault();
    const list = [...new Set(kernelText.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean))];
    if (list.join(', ') !== urlKernels) onView({ kernels: list, cell: null });
  };
  return (
    <form className="field" onSubmit={applyKernels}>
      <label htmlFor="cmp-kernels">Kernels</label>
      <div className="field-inline">
        <input
          id="cmp-kernels"
          list="cmp-kernel-ids"
          value={kernelText}
          onChange={(e) => setKernelText(e.target.value)}
          onBlur={() => applyKernels()}
          placeholder="all kernels with results; or ids and family.* separated by commas"
          size={50}
        />
        <button type="submit" className="button">
          Apply
        </button>
      </div>
      <datalist id="cmp-kernel-ids">
        {families.map((f) => (
          <option key={`f-${f}`} value={`${f}.*`} />
        ))}
        {kernels.map((k) => (
          <option key={k.id} value={k.id} />
        ))}
      </datalist>
      <FamilyChips families={families} view={view} onView={onView} />
    </form>
  );
}

/** A toggle per kernel family: compare all of its kernels (family.*) or not. */
function FamilyChips({ families, view, onView }: { families: string[]; view: CompareView; onView: OnView }) {
  return (
    <div className="family-chips" role="group" aria-label="Kernel families">
      <span className="muted small">Families:</span>
      {families.map((f) => {
        const on = view.kernels.includes(`${f}.*`);
        return (
          <button
            key={f}
            type="button"
            className="chip"
            aria-pressed={on}
            title={on ? `Stop comparing every ${f}.* kernel` : `Compare every ${f}.* kernel`}
            onClick={() => onView({ kernels: toggleFamily(view.kernels, f), cell: null })}
            data-testid="family-chip"
          >
            {f}
          </button>
        );
      })}
    </div>
  );
}

/** Machines, kernels, baseline and runs of the comparison; every change goes to the URL. */
export function ComparePickers({
  machines,
  kernels,
  view,
  onView,
  match = null,
}: {
  machines: Machine[];
  kernels: Kernel[];
  view: CompareView;
  onView: OnView;
  /** The machines the view's label selector matches (null: no selector). */
  match?: LabelMatch | null;
}) {
  const chosen = view.machines;
  const byId = new Map(machines.map((m) => [m.id, m]));
  return (
    <details className="pickers" open={chosen.length < 2}>
      <summary>Choose machines, kernels, baseline and runs</summary>
      <div className="pickers-body">
        <MachineChecks machines={machines} view={view} onView={onView} match={match} />
        <div>
          <KernelsForm kernels={kernels} view={view} onView={onView} />
          {chosen.length > 0 && (
            <div className="field field-inline">
              <label htmlFor="cmp-baseline">Baseline</label>
              <Select
                id="cmp-baseline"
                value={view.baseline ?? chosen[0] ?? ''}
                onChange={(e) => onView({ baseline: e.target.value })}
                options={chosen.map((id) => ({ value: id, label: byId.get(id)?.name ?? id }))}
              />
            </div>
          )}
          {chosen.length > 0 && (
            <fieldset className="runs-picker">
              <legend>Runs</legend>
              {chosen.map((id) => {
                const m = byId.get(id);
                return m ? <RunPicker key={id} machine={m} view={view} onView={onView} /> : null;
              })}
            </fieldset>
          )}
        </div>
      </div>
    </details>
  );
}
