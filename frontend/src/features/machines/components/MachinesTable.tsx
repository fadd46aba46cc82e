import { Fragment, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { OnlineBadge, StatusBadge } from '@/components/StatusBadge';
import { DataTable } from '@/components/TableHead';
import { num, unseen } from '@/components/table-columns';
import { RelativeTime } from '@/components/Time';
import { useNow } from '@/components/use-now';
import type { Machine, Run } from '@/lib/api-types';
import { comparePath } from '@/lib/compare-query';
import { newRunPath, runPath } from '@/lib/query-state';
import { factsLine } from '../utils/key-facts';
import { groupMachines } from '../utils/labels';
import { LabelChips } from './LabelChips';
import { MachineFacts } from './MachineFacts';
import { OutdatedAgents, OutdatedBadge } from './OutdatedAgents';
import { paths } from '@/app/paths';

/** Each machine's newest run among `runs` (newest first, as the server lists them). */
function lastRuns(runs: Run[] | undefined): Map<string, Run> {
  const out = new Map<string, Run>();
  for (const r of runs ?? []) if (!out.has(r.machine_id)) out.set(r.machine_id, r);
  return out;
}

/** A machine: its pick box, name, state, last contact and run, hardware class and labels, facts, kernels
 * and a new-run link. */
function MachineRow(props: { machine: Machine; run?: Run; now: Date; picked: boolean; onPick: (on: boolean) => void; stale: boolean }) {
  const { machine: m, run, now, picked, onPick, stale } = props;
  return (
    <tr data-testid="machine-row" data-machine-id={m.id}>
      <td>
        <input type="checkbox" aria-label={`Select ${m.name} to compare`} checked={picked} onChange={(e) => onPick(e.target.checked)} data-testid="machine-select" />
      </td>
      <td className="col-machine">
        <Link className="strong" to={paths.machine(m.id)} data-testid="machine-link">
          {m.name}
        </Link>
        <div className="muted small">{m.hostname}</div>
        <div className="muted small narrow-only">{factsLine(m.facts)}</div>
      </td>
      <td>
        <OnlineBadge online={m.online} stale={stale} /> <OutdatedBadge machine={m} />
      </td>
      <td>
        <RelativeTime value={m.last_seen} now={now} />
      </td>
      <td data-testid="machine-last-run">
        {run ? (
          <Link to={runPath(run.id)} className="last-run">
            <StatusBadge status={run.status} /> <RelativeTime value={run.finished_at ?? run.created_at} now={now} />
          </Link>
        ) : (
          <span className="muted">none</span>
        )}
      </td>
      <td data-testid="machine-labels">
        {m.hardware_class && (
          <div className="small" data-testid="hardware-class">
            {m.hardware_class}
          </div>
        )}
        <LabelChips machine={m} />
      </td>
      <td className="col-facts">
        <MachineFacts facts={m.facts} />
      </td>
      <td className="num">{m.kernels.length}</td>
      <td>
        <Link className="button" to={newRunPath({ machines: [m.id] })} aria-label={`New run on ${m.name}`}>
          New run
        </Link>
      </td>
    </tr>
  );
}

const COLUMNS = [unseen('Select'), 'Machine', 'State', 'Last seen', 'Last run', 'Class and labels', { label: 'Facts', className: 'col-facts' }, num('Kernels'), unseen('Actions')];

/** The machines, with a group heading row before each group when `group` is set ('class', 'label:<key>';
 * see utils/labels.ts). Ticking two or more compares them, across groups. `stale`: the list could not be
 * refreshed, so no machine's state is known. */
export function MachinesTable({ machines, runs, group = '', stale = false }: { machines: Machine[]; runs?: Run[]; group?: string; stale?: boolean }) {
  const now = useNow();
  const navigate = useNavigate();
  const [picked, setPicked] = useState<string[]>([]);
  const last = lastRuns(runs);
  const chosen = picked.filter((id) => machines.some((m) => m.id === id));
  const toggle = (id: string, on: boolean) => setPicked((p) => (on ? [...p.filter((x) => x !== id), id] : p.filter((x) => x !== id)));
  return (
    <>
      <OutdatedAgents machines={machines} />
      <div className="toolbar">
        <button
          type="button"
          className="button button-primary"
          disabled={chosen.length < 2}
          onClick={() => navigate(comparePath({ machines: chosen }))}
          data-testid="compare-selected"
        >
          Compare {chosen.length >= 2 ? `${chosen.length} machines` : 'selected'}
        </button>
        <span className="muted small">{chosen.length < 2 ? 'Tick two or more machines to compare them.' : ''}</span>
      </div>
      <DataTable columns={COLUMNS} className="machines-table">
        {groupMachines(machines, group).map((g) => (
          <Fragment key={g.key}>
            {g.title && (
              <tr className="group-row" data-testid="machine-group">
                <th colSpan={COLUMNS.length} scope="colgroup">
                  {g.title} <span className="muted small">· {g.machines.length === 1 ? '1 machine' : `${g.machines.length} machines`}</span>
                </th>
              </tr>
            )}
            {g.machines.map((m) => (
              <MachineRow key={m.id} machine={m} run={last.get(m.id)} now={now} picked={chosen.includes(m.id)} onPick={(on) => toggle(m.id, on)} stale={stale} />
            ))}
          </Fragment>
        ))}
      </DataTable>
    </>
  );
}
