import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ErrorMessage } from '@/components/Feedback';
import { kernelsOnAll } from '@/features/kernels';
import { ApiError, errorMessage } from '@/lib/api-client';
import { MIN_TIME_S, REPETITIONS, type Kernel, type Machine, type Profile } from '@/lib/api-types';
import { effectiveSettings, estimateRun, formatEstimate, guessLaunchCost, repsPerLaunch } from '@/features/runs/utils/estimate';
import { initialFormValue, type FormValue } from '@/lib/params';
import { batchPath, decodeNewRunQuery, encodeNewRunQuery, runPath, type NewRunQuery } from '@/lib/query-state';
import { buildRunRequest, formErrorsFromServer, type FormErrors, type RepeatedForm } from '@/features/runs/utils/run-request';
import { profileHelp, profileNames, profileSettings, type Limits } from '@/lib/limits';
import { countItems, type SweepChoice } from '@/lib/sweep';
import { useCreateRun, useLaunchOverheads } from '../api/runs';
import { KernelPicker, MissingKernels } from './KernelPicker';
import { MachinePicker } from './MachinePicker';

/** The one online machine, when exactly one is: the form starts with it ticked (none otherwise). */
function onlyOnline(machines: Machine[]): string[] {
  const online = machines.filter((m) => m.online);
  return online.length === 1 ? [online[0]!.id] : [];
}

/**
 * Brings the first field marked invalid into view and puts the cursor in it (a fieldset's first
 * control); with none marked, the error summary.
 */
function focusFirstInvalid(form: HTMLFormElement) {
  const marked = form.querySelector<HTMLElement>('[aria-invalid="true"]');
  const target = marked?.matches('input, select, textarea, button')
    ? marked
    : (marked?.querySelector<HTMLElement>('input, select, textarea, button') ?? form.querySelector<HTMLElement>('#form-errors'));
  if (!target) return;
  target.scrollIntoView({ block: 'center' });
  target.focus({ preventScroll: true });
}

/**
 * Launches a run on one machine, or a batch (one run per machine) on several. The machines and the
 * chosen kernels are kept in the URL (?machines=a,b&kernel=…), so a link opens the form filled in;
 * parameter values, sweeps, profile and overrides are local to the form, or come from `repeat` (the
 * request of the run named by ?from=, so "Run again" posts the same body).
 */
export function NewRunForm({ machines, kernels, limits, repeat }: { machines: Machine[]; kernels: Kernel[]; limits: Limits; repeat?: RepeatedForm }) {
  const [searchParams, setSearchParams] = useSearchParams();
  // The URL gives the first state; after that each change is written through to it. Reading the URL
  // back would lag: the router commits a search change a tick later, so two quick clicks would lose one.
  const [query, setQueryState] = useState<NewRunQuery>(() => {
    const q = decodeNewRunQuery(searchParams);
    const withKernels = repeat && q.kernels.length === 0 ? { ...q, kernels: repeat.kernels } : q;
    // `machines=` present but empty: the user unticked them (the form writes that back), so a reload or
    // a remount of the form keeps it that way rather than ticking the one online machine again.
    const cleared = searchParams.has('machines');
    return withKernels.machines.length === 0 && !cleared ? { ...withKernels, machines: onlyOnline(machines) } : withKernels;
  });
  const byId = useMemo(() => new Map(machines.map((m) => [m.id, m])), [machines]);
  const chosenIds = query.machines.filter((id) => byId.has(id));
  const unknownIds = query.machines.filter((id) => !byId.has(id));
  const { groups, missing } = kernelsOnAll(kernels, chosenIds);
  const available = new Map(groups.flatMap(([, ks]) => ks.map((k) => [k.id, k] as const)));
  const selected = new Set(query.kernels.filter((id) => available.has(id)));

  const [paramValues, setParamValues] = useState<Record<string, Record<string, FormValue>>>(repeat?.values ?? {});
  const [sweepChoices, setSweepChoices] = useState<Record<string, Record<string, SweepChoice>>>(repeat?.sweeps ?? {});
  const [profile, setProfile] = useState<Profile>(repeat?.profile ?? limits.default_profile);
  const thin = limits.profiles[profile]?.thin_sweeps ?? false;
  const [repetitions, setRepetitions] = useState(repeat?.repetitions ?? '');
  const [minTime, setMinTime] = useState(repeat?.minTime ?? '');
  const launches = repeat?.launches;
  const [errors, setErrors] = useState<FormErrors>({});
  const [submitError, setSubmitError] = useState<string | null>(null);
  // Bumped by each refused submit: the effect below then brings the first marked field into view.
  const [refusals, setRefusals] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (refusals > 0 && formRef.current) focusFirstInvalid(formRef.current);
  }, [refusals]);
  const createRun = useCreateRun();
  const navigate = useNavigate();

  const valuesOf = (k: Kernel): Record<string, FormValue> => {
    const own = paramValues[k.id] ?? {};
    return Object.fromEntries(k.params.map((p) => [p.name, own[p.name] ?? initialFormValue(p)]));
  };
  const sweepsOf = (k: Kernel): Record<string, SweepChoice> => sweepChoices[k.id] ?? {};

  // Items run in the order the kernels are listed (family, then id).
  const chosenKernels = groups.flatMap(([, ks]) => ks).filter((k) => selected.has(k.id));
  const count = countItems(
    chosenKernels.map((k) => ({ specs: k.params, sweeps: sweepsOf(k) })),
    thin,
    chosenIds.length,
  );

  const settings = effectiveSettings(profileSettings(limits, profile), repetitions, minTime, launches);
  const overheads = useLaunchOverheads(chosenIds.length === 1 ? chosenIds[0]! : null);
  const estimate =
    count.perRun === null
      ? null
      : estimateRun(
          chosenKernels.map((k, i) => ({ kernel: k.id, items: count.perKernel[i] ?? 0 })),
          settings,
          chosenIds.length === 1 ? overheads.data : undefined,
        );

  const setQuery = (machineIds: string[], chosen: string[]) => {
    const next = query.from ? { machines: machineIds, kernels: chosen, from: query.from } : { machines: machineIds, kernels: chosen };
    setQueryState(next);
    const qs = encodeNewRunQuery(next);
    setSearchParams(machineIds.length === 0 ? (qs ? `machines=&${qs}` : 'machines=') : qs, { replace: true });
  };

  const clearError = (key: string) => setErrors(({ [key]: _, ...rest }) => rest);

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

  const onParam = (kernelId: string, name: string, value: FormValue) => {
    setParamValues((prev) => ({ ...prev, [kernelId]: { ...prev[kernelId], [name]: value } }));
    clearError(`${kernelId}.${name}`);
  };

  const onSweep = (kernelId: string, name: string, choice: SweepChoice | null) => {
    setSweepChoices((prev) => {
      const { [name]: _, ...rest } = prev[kernelId] ?? {};
      return { ...prev, [kernelId]: choice ? { ...rest, [name]: choice } : rest };
    });
    clearError(`${kernelId}.${name}`);
    clearError('items');
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitError(null);
    const items = chosenKernels.map((kernel) => ({ kernel, values: valuesOf(kernel), sweeps: sweepsOf(kernel) }));
    const built = buildRunRequest({ machineIds: chosenIds, items, profile, repetitions, minTime, launches, limits });
    if (!built.ok) {
      setErrors(built.errors);
      setRefusals((n) => n + 1);
      return;
    }
    setErrors({});
    createRun.mutate(built.request, {
      onSuccess: (created) =>
        navigate(created.kind === 'batch' ? batchPath(created.batch.batch_id) : runPath(created.run.id)),
      onError: (err) => {
        if (err instanceof ApiError) setErrors(formErrorsFromServer(err.fieldErrors, built.request));
        setSubmitError(errorMessage(err));
        setRefusals((n) => n + 1);
      },
    });
  };

  const invalid = Object.keys(errors).length > 0;
  const offline = chosenIds.map((id) => byId.get(id)).filter((m): m is Machine => m !== undefined && !m.online);
  return (
    <form ref={formRef} className="form" onSubmit={onSubmit} noValidate aria-describedby={invalid ? 'form-errors' : undefined}>
      <div className="field">
        <MachinePicker machines={machines} chosen={chosenIds} onChange={onMachines} invalid={!!errors.machine} />
        {unknownIds.length > 0 && (
          <div className="field-error">No machine with id {unknownIds.join(', ')}: choose from the list.</div>
        )}
        {offline.length > 0 && (
          <div className="muted small">
            Offline: {offline.map((m) => m.name).join(', ')}. Runs there wait in the queue until the agent connects.
          </div>
        )}
        {chosenIds.length > 1 && (
          <div className="muted small">{chosenIds.length} machines: one run on each, together as one batch.</div>
        )}
        {errors.machine && <div className="field-error">{errors.machine}</div>}
      </div>

      {chosenIds.length > 0 && (
        <section aria-labelledby="kernels-heading">
          <h2 id="kernels-heading">Kernels</h2>
          {errors.items && (
            <div id="kernels-error" className="field-error">
              {errors.items}
            </div>
          )}
          {groups.length === 0 ? (
            <p className="muted">
              {chosenIds.length === 1 ? "This machine's agent lists no kernels." : 'No kernel is on every chosen machine.'}
            </p>
          ) : (
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
          )}
          <MissingKernels missing={missing} machines={byId} />
        </section>
      )}

      <div className="row">
        <div className="field">
          <label htmlFor="profile">Profile</label>
          <select id="profile" value={profile} onChange={(e) => setProfile(e.target.value as Profile)} aria-describedby="profile-help">
            {profileNames(limits).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
          <div id="profile-help" className="muted small">
            {profileHelp(limits, profile)}
          </div>
        </div>
        <div className="field">
          <label htmlFor="repetitions">Repetitions</label>
          <input
            id="repetitions"
            type="number"
            min={REPETITIONS.minimum}
            max={REPETITIONS.maximum}
            step={1}
            value={repetitions}
            placeholder="profile's"
            onChange={(e) => setRepetitions(e.target.value)}
            aria-invalid={errors.repetitions ? true : undefined}
          />
          <div className="muted small">samples per item ({REPETITIONS.minimum}–{REPETITIONS.maximum}); empty: the profile's</div>
          {errors.repetitions && <div className="field-error">{errors.repetitions}</div>}
        </div>
        <div className="field">
          <label htmlFor="min-time">Min time (s)</label>
          <input
            id="min-time"
            type="number"
            min={MIN_TIME_S.minimum}
            max={MIN_TIME_S.maximum}
            step="any"
            value={minTime}
            placeholder="profile's"
            onChange={(e) => setMinTime(e.target.value)}
            aria-invalid={errors.min_time_s ? true : undefined}
          />
          <div className="muted small">per repetition; empty: the profile's</div>
          {errors.min_time_s && <div className="field-error">{errors.min_time_s}</div>}
        </div>
      </div>

      {launches !== undefined && (
        <p className="muted small" data-testid="repeat-launches">
          {launches} {launches === 1 ? 'launch' : 'launches'} per item, as in the run repeated.
        </p>
      )}

      {(submitError || invalid) && (
        <div id="form-errors" tabIndex={-1}>
          {submitError ? (
            <ErrorMessage title="The server refused the run:" error={submitError} />
          ) : (
            <div className="message message-error" role="alert">
              Please fix the {Object.keys(errors).length === 1 ? 'marked field' : `${Object.keys(errors).length} marked fields`}: each
              says what is wrong beside it.
            </div>
          )}
        </div>
      )}

      <div className="actions">
        <button type="submit" className="button button-primary" disabled={createRun.isPending}>
          {createRun.isPending ? 'Starting…' : chosenIds.length > 1 ? `Start ${chosenIds.length} runs` : 'Start run'}
        </button>
        {selected.size > 0 && (
          <span className="muted" data-testid="item-count">
            {count.perRun === null
              ? 'fix the sweeps to see how many items'
              : chosenIds.length > 1
                ? `${count.perRun} ${count.perRun === 1 ? 'item' : 'items'} per machine × ${chosenIds.length} machines = ${count.total} items`
                : `${count.perRun} ${count.perRun === 1 ? 'item' : 'items'}`}
            {` from ${selected.size} ${selected.size === 1 ? 'kernel' : 'kernels'}`}
          </span>
        )}
        {selected.size > 0 && estimate && (
          <span className="muted" data-testid="run-estimate" title={estimateHow(settings, estimate.learnt)}>
            {formatEstimate(estimate.seconds)}
            {chosenIds.length > 1 ? ' per machine, side by side' : ''} (estimate: {count.perRun}{' '}
            {count.perRun === 1 ? 'item' : 'items'} × {settings.launches} launches × {repsPerLaunch(settings.repetitions, settings.launches)}{' '}
            repetitions × {settings.minTimeS} s, plus each launch's start
            {estimate.learnt > 0 ? `, learnt from earlier runs here for ${estimate.learnt} of ${selected.size} kernels` : ''})
          </span>
        )}
      </div>
    </form>
  );
}

/** How the estimate is made, as the tooltip of its figure. */
function estimateHow(settings: { launches: number; repetitions: number; minTimeS: number }, learnt: number): string {
  return (
    `Each item runs in ${settings.launches} kernel processes (launches) of ${repsPerLaunch(settings.repetitions, settings.launches)} ` +
    `repetitions, each at least ${settings.minTimeS} s, plus what a launch costs to start and calibrate: ` +
    (learnt > 0
      ? 'learnt from the launches of earlier runs on this machine for the kernels that have some, else guessed.'
      : `guessed (${guessLaunchCost(settings.minTimeS).toFixed(2)} s), as no earlier run here says.`) +
    ' A busy host re-measures disturbed launches, which takes longer.'
  );
}
