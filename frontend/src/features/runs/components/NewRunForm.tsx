import { useMemo, type FormEvent } from 'react';
import { kernelsOnAll } from '@/features/kernels';
import type { Kernel, Machine } from '@/lib/api-types';
import { buildRunRequest, type RepeatedForm } from '@/features/runs/utils/run-request';
import type { Limits } from '@/lib/limits';
import { countItems } from '@/lib/sweep';
import { useKernelInputs, useNewRunQuery, useRunEstimate, useRunSettings, useRunSubmit } from '../hooks/useNewRunForm';
import { KernelPicker } from './KernelPicker';
import { FormErrorSummary, KernelsSection, MachineField, RunSettingsRow, StartActions } from './NewRunFields';

/**
 * Launches a run on one machine, or a batch (one run per machine) on several. The machines and the
 * chosen kernels are kept in the URL (?machines=a,b&kernel=…), so a link opens the form filled in;
 * parameter values, sweeps, profile and overrides are local to the form, or come from `repeat` (the
 * request of the run named by ?from=, so "Run again" posts the same body).
 */
export function NewRunForm(props: { machines: Machine[]; kernels: Kernel[]; limits: Limits; repeat?: RepeatedForm; stale?: boolean }) {
  const { machines, kernels, limits, repeat, stale = false } = props;
  const { query, setQuery } = useNewRunQuery(machines, repeat);
  const byId = useMemo(() => new Map(machines.map((m) => [m.id, m])), [machines]);
  const chosenIds = query.machines.filter((id) => byId.has(id));
  const { groups, missing } = kernelsOnAll(kernels, chosenIds);
  const available = new Map(groups.flatMap(([, ks]) => ks.map((k) => [k.id, k] as const)));
  const selected = new Set(query.kernels.filter((id) => available.has(id)));
  const runSettings = useRunSettings(limits, repeat);
  const { profile, repetitions, minTime, launches, settings, thin } = runSettings;
  const { formRef, errors, clearError, submitError, setSubmitError, submit, pending } = useRunSubmit();
  const { valuesOf, sweepsOf, onParam, onSweep } = useKernelInputs(clearError, repeat);

  // Items run in the order the kernels are listed (family, then id).
  const chosenKernels = groups.flatMap(([, ks]) => ks).filter((k) => selected.has(k.id));
  const count = countItems(chosenKernels.map((k) => ({ specs: k.params, sweeps: sweepsOf(k) })), thin, chosenIds.length);
  const estimate = useRunEstimate(chosenKernels, count, settings, chosenIds);
  const onMachines = (ids: string[]) => {
    setSubmitError(null);
    clearError('machine');
    setQuery(ids, query.kernels);
  };
  const onToggle = (id: string, on: boolean) => {
    const next = on ? [...query.kernels.filter((k) => k !== id), id] : query.kernels.filter((k) => k !== id);
    clearError('items');
    setQuery(query.machines, next);
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitError(null);
    const items = chosenKernels.map((kernel) => ({ kernel, values: valuesOf(kernel), sweeps: sweepsOf(kernel) }));
    submit(buildRunRequest({ machineIds: chosenIds, items, profile, repetitions, minTime, launches, limits }));
  };
  const invalid = Object.keys(errors).length > 0;
  return (
    <form ref={formRef} className="form" onSubmit={onSubmit} noValidate aria-describedby={invalid ? 'form-errors' : undefined}>
      <MachineField
        machines={machines}
        byId={byId}
        requested={query.machines}
        chosenIds={chosenIds}
        error={errors.machine}
        onChange={onMachines}
        stale={stale}
      />
      {chosenIds.length > 0 && (
        <KernelsSection machineCount={chosenIds.length} error={errors.items} empty={groups.length === 0} missing={missing} machines={byId}>
          <KernelPicker
            groups={groups}
            selected={selected}
            values={valuesOf}
            sweeps={sweepsOf}
            profile={profile}
            thin={thin}
            errors={errors}
            onToggle={onToggle}
            onParam={onParam}
            onSweep={onSweep}
            searchInvalid={!!errors.items}
          />
        </KernelsSection>
      )}
      <RunSettingsRow limits={limits} errors={errors} {...runSettings} />
      {launches !== undefined && (
        <p className="muted small" data-testid="repeat-launches">
          {launches} {launches === 1 ? 'launch' : 'launches'} per item, as in the run repeated.
        </p>
      )}
      <FormErrorSummary submitError={submitError} errors={errors} />
      <StartActions
        pending={pending}
        machineCount={chosenIds.length}
        kernelCount={selected.size}
        count={count}
        estimate={estimate}
        settings={settings}
      />
    </form>
  );
}
