import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Select } from '@/components/Form';
import { DataTable } from '@/components/TableHead';
import { machineOptions } from '@/components/options';
import { runsQuery, useRun } from '@/features/runs';
import { runKernels, type Machine, type Run } from '@/lib/api-types';
import type { CompareView, Side } from '@/lib/compare-query';
import { formatDateTime } from '@/lib/format';

type Choice = 0 | 1 | null;

/** The machine's finished runs, newest first, each with a box per side. */
function SideRunsTable(props: { runs: Run[]; labels: [string, string]; choice: Map<string, Choice>; onChoose: (runId: string, c: Choice) => void }) {
  const { runs, labels, choice, onChoose } = props;
  return (
    <DataTable columns={['Run', 'Kernels', labels[0] || 'A', labels[1] || 'B']} testId="ab-runs">
      {runs.map((r) => (
        <tr key={r.id} data-run={r.id}>
          <td>
            {formatDateTime(r.finished_at ?? r.created_at)} <span className="muted small">{r.id.slice(0, 8)}</span>
          </td>
          <td className="small">{runKernels(r).slice(0, 4).join(', ')}</td>
          {([0, 1] as const).map((i) => (
            <td key={i}>
              <input
                type="checkbox"
                aria-label={`${r.id} on side ${i === 0 ? 'A' : 'B'}`}
                checked={choice.get(r.id) === i}
                onChange={(e) => onChoose(r.id, e.target.checked ? i : null)}
              />
            </td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * Same-machine A/B: the machine's finished runs, each put on side A ("before"), side B ("after") or
 * neither; Compare makes the two sets the columns. Every choice reaches the URL only on Compare.
 */
export function SidesPicker({ machines, view, onView }: { machines: Machine[]; view: CompareView; onView: (p: Partial<CompareView>) => void }) {
  // A shared link names the sides but not the machine: the first side's first run says which it is.
  const firstRunId = view.sides[0]?.runs[0] ?? '';
  const firstRun = useRun(firstRunId, { enabled: view.ab === null && firstRunId !== '' });
  const machineId = view.ab ?? firstRun.data?.machine_id ?? (firstRunId ? '' : (machines[0]?.id ?? ''));
  const runs = useQuery({ ...runsQuery({ machine: machineId, status: 'succeeded' }), enabled: machineId !== '' });
  const [labels, setLabels] = useState<[string, string]>([view.sides[0]?.label ?? 'before', view.sides[1]?.label ?? 'after']);
  const [choice, setChoice] = useState<Map<string, Choice>>(
    () => new Map(view.sides.slice(0, 2).flatMap((s, i) => s.runs.map((r) => [r, i as Choice] as const))),
  );
  // A side lists its runs oldest first (the list shows them newest first).
  const side = (i: 0 | 1) => (runs.data ?? []).filter((r) => choice.get(r.id) === i).map((r) => r.id).reverse();
  const ready = side(0).length > 0 && side(1).length > 0 && labels[0].trim() !== '' && labels[0].trim() !== labels[1].trim();
  const compare = () => {
    const sides: Side[] = [
      { label: labels[0].trim(), runs: side(0) },
      { label: labels[1].trim(), runs: side(1) },
    ];
    onView({ sides, ab: machineId, baseline: null, machines: [], runs: [], batch: null, sortMachine: null, cell: null });
  };
  return (
    <section className="sides-picker" data-testid="sides-picker">
      <div className="toolbar">
        <label>
          Machine{' '}
          <Select
            value={machineId}
            onChange={(e) => onView({ ab: e.target.value, sides: [] })}
            data-testid="ab-machine"
            options={[...(machineId === '' ? [{ value: '', label: '…' }] : []), ...machineOptions(machines)]}
          />
        </label>
        {[0, 1].map((i) => (
          <label key={i}>
            Side {i === 0 ? 'A' : 'B'}{' '}
            <input
              className="input-small"
              value={labels[i as 0 | 1]}
              maxLength={32}
              onChange={(e) => setLabels(i === 0 ? [e.target.value, labels[1]] : [labels[0], e.target.value])}
              data-testid={`ab-label-${i}`}
            />
          </label>
        ))}
        <button type="button" className="button button-primary" disabled={!ready} onClick={compare} data-testid="ab-compare">
          Compare {side(0).length} vs {side(1).length} runs
        </button>
        <button type="button" className="link-button" onClick={() => onView({ ab: null, sides: [] })}>
          Compare machines instead
        </button>
      </div>
      {runs.isPending && machineId && <p className="muted">Loading runs…</p>}
      {runs.data && runs.data.length < 2 && <p className="muted">This machine needs two finished runs to compare.</p>}
      {runs.data && runs.data.length >= 2 && (
        <SideRunsTable runs={runs.data} labels={labels} choice={choice} onChoose={(id, c) => setChoice(new Map(choice).set(id, c))} />
      )}
    </section>
  );
}
