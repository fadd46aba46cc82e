import { useMemo, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ErrorMessage } from '@/components/Feedback';
import { kernelsByFamily } from '@/features/kernels/api/group';
import { ApiError, errorMessage } from '@/lib/api-client';
import type { Kernel, Machine } from '@/lib/api-types';
import {
  buildRunRequest,
  formErrorsFromServer,
  initialFormValue,
  type FormErrors,
  type FormValue,
} from '@/lib/params';
import { decodeNewRunQuery, encodeNewRunQuery } from '@/lib/query-state';
import { useCreateRun } from '../api/runs';
import { KernelPicker } from './KernelPicker';

export const DEFAULT_REPETITIONS = '5';
export const DEFAULT_MIN_TIME_S = '0.2';

/**
 * Launches a run. The machine and the chosen kernels live in the URL (?machine=…&kernel=…), so a
 * link opens the form filled in; parameter values, repetitions and min time are local to the form.
 */
export function NewRunForm({ machines, kernels }: { machines: Machine[]; kernels: Kernel[] }) {
  const [searchParams, setSearchParams] = useSearchParams();
  const query = decodeNewRunQuery(searchParams);
  const machineId = query.machine ?? '';
  const machine = machines.find((m) => m.id === machineId);
  const groups = useMemo(() => kernelsByFamily(kernels, machine ? machine.id : null), [kernels, machine]);
  const available = useMemo(() => new Map(groups.flatMap(([, ks]) => ks.map((k) => [k.id, k] as const))), [groups]);
  const selected = new Set(query.kernels.filter((id) => available.has(id)));

  const [paramValues, setParamValues] = useState<Record<string, Record<string, FormValue>>>({});
  const [repetitions, setRepetitions] = useState(DEFAULT_REPETITIONS);
  const [minTime, setMinTime] = useState(DEFAULT_MIN_TIME_S);
  const [errors, setErrors] = useState<FormErrors>({});
  const [submitError, setSubmitError] = useState<string | null>(null);
  const createRun = useCreateRun();
  const navigate = useNavigate();

  const valuesOf = (k: Kernel): Record<string, FormValue> => {
    const own = paramValues[k.id] ?? {};
    return Object.fromEntries(k.params.map((p) => [p.name, own[p.name] ?? initialFormValue(p)]));
  };

  const setQuery = (machine: string | null, chosen: string[]) =>
    setSearchParams(encodeNewRunQuery({ machine, kernels: chosen }), { replace: true });

  const onMachine = (id: string) => {
    setErrors({});
    setSubmitError(null);
    // Keep the kernels the other machine also has.
    const keep = query.kernels.filter((k) => kernels.some((x) => x.id === k && x.machines.includes(id)));
    setQuery(id || null, keep);
  };

  const onToggle = (id: string, on: boolean) => {
    const next = on ? [...query.kernels.filter((k) => k !== id), id] : query.kernels.filter((k) => k !== id);
    setQuery(machineId || null, next);
  };

  const onParam = (kernelId: string, name: string, value: FormValue) => {
    setParamValues((prev) => ({ ...prev, [kernelId]: { ...prev[kernelId], [name]: value } }));
    setErrors(({ [`${kernelId}.${name}`]: _, ...rest }) => rest);
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitError(null);
    // Items run in the order the kernels are listed (family, then id).
    const items = groups
      .flatMap(([, ks]) => ks)
      .filter((k) => selected.has(k.id))
      .map((kernel) => ({ kernel, values: valuesOf(kernel) }));
    const built = buildRunRequest({ machineId: machine ? machine.id : '', items, repetitions, minTime });
    if (!built.ok) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    createRun.mutate(built.request, {
      onSuccess: (run) => navigate(`/runs/${encodeURIComponent(run.id)}`),
      onError: (err) => {
        if (err instanceof ApiError) setErrors(formErrorsFromServer(err.fieldErrors, built.request));
        setSubmitError(errorMessage(err));
      },
    });
  };

  const invalid = Object.keys(errors).length > 0;
  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-describedby={invalid ? 'form-errors' : undefined}>
      <div className="field">
        <label htmlFor="machine">Machine</label>
        <select
          id="machine"
          value={machine ? machine.id : ''}
          onChange={(e) => onMachine(e.target.value)}
          aria-invalid={errors.machine ? true : undefined}
        >
          <option value="">Choose a machine…</option>
          {machines.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name} ({m.hostname}){m.online ? '' : ' — offline'}
            </option>
          ))}
        </select>
        {machineId && !machine && (
          <div className="field-error">No machine with id {machineId}: choose one from the list.</div>
        )}
        {machine && !machine.online && (
          <div className="muted small">This machine is offline: the run will wait in the queue until its agent connects.</div>
        )}
        {errors.machine && <div className="field-error">{errors.machine}</div>}
      </div>

      {machine && (
        <section aria-labelledby="kernels-heading">
          <h2 id="kernels-heading">Kernels</h2>
          {groups.length === 0 ? (
            <p className="muted">This machine's agent lists no kernels.</p>
          ) : (
            <KernelPicker
              groups={groups}
              selected={selected}
              values={valuesOf}
              errors={errors}
              onToggle={onToggle}
              onParam={onParam}
            />
          )}
          {errors.items && <div className="field-error">{errors.items}</div>}
        </section>
      )}

      <div className="row">
        <div className="field">
          <label htmlFor="repetitions">Repetitions</label>
          <input
            id="repetitions"
            type="number"
            min={1}
            max={1000}
            step={1}
            value={repetitions}
            onChange={(e) => setRepetitions(e.target.value)}
            aria-invalid={errors.repetitions ? true : undefined}
          />
          <div className="muted small">samples per kernel (1–1000)</div>
          {errors.repetitions && <div className="field-error">{errors.repetitions}</div>}
        </div>
        <div className="field">
          <label htmlFor="min-time">Min time (s)</label>
          <input
            id="min-time"
            type="number"
            min={0.001}
            max={60}
            step="any"
            value={minTime}
            placeholder="kernel default"
            onChange={(e) => setMinTime(e.target.value)}
            aria-invalid={errors.min_time_s ? true : undefined}
          />
          <div className="muted small">per repetition; leave empty for the kernel default</div>
          {errors.min_time_s && <div className="field-error">{errors.min_time_s}</div>}
        </div>
      </div>

      {(submitError || invalid) && (
        <div id="form-errors">
          {submitError ? (
            <ErrorMessage title="The server refused the run:" error={submitError} />
          ) : (
            <div className="message message-error" role="alert">
              Please fix the marked fields.
            </div>
          )}
        </div>
      )}

      <div className="actions">
        <button type="submit" className="button button-primary" disabled={createRun.isPending}>
          {createRun.isPending ? 'Starting…' : 'Start run'}
        </button>
        {selected.size > 0 && (
          <span className="muted">
            {selected.size} {selected.size === 1 ? 'kernel' : 'kernels'} chosen
          </span>
        )}
      </div>
    </form>
  );
}
