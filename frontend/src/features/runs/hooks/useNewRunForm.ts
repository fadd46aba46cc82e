import { useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '@/lib/api-client';
import type { Kernel, Machine, Profile } from '@/lib/api-types';
import { effectiveSettings, estimateRun, type RunEstimate } from '@/features/runs/utils/estimate';
import { profileSettings, type Limits, type ProfileSettings } from '@/lib/limits';
import { initialFormValue, type FormValue } from '@/lib/params';
import { batchPath, decodeNewRunQuery, encodeNewRunQuery, runPath, type NewRunQuery } from '@/lib/query-state';
import { formErrorsFromServer, type buildRunRequest, type FormErrors, type RepeatedForm } from '@/features/runs/utils/run-request';
import type { ItemCount, SweepChoice } from '@/lib/sweep';
import { submitError as describeSubmitError, type SubmitError } from '@/features/runs/utils/submit-error';
import { useCreateRun, useLaunchOverheads } from '../api/runs';

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
 * The chosen machines and kernels, kept in the URL (?machines=a,b&kernel=…). The URL gives the first
 * state; after that each change is written through to it. Reading the URL back would lag: the router
 * commits a search change a tick later, so two quick clicks would lose one.
 */
export function useNewRunQuery(machines: Machine[], repeat?: RepeatedForm) {
  const [searchParams, setSearchParams] = useSearchParams();
  const [query, setQueryState] = useState<NewRunQuery>(() => {
    const q = decodeNewRunQuery(searchParams);
    const withKernels = repeat && q.kernels.length === 0 ? { ...q, kernels: repeat.kernels } : q;
    // `machines=` present but empty: the user unticked them (the form writes that back), so a reload or
    // a remount of the form keeps it that way rather than ticking the one online machine again.
    const cleared = searchParams.has('machines');
    return withKernels.machines.length === 0 && !cleared ? { ...withKernels, machines: onlyOnline(machines) } : withKernels;
  });
  const setQuery = (machineIds: string[], chosen: string[]) => {
    const next = query.from ? { machines: machineIds, kernels: chosen, from: query.from } : { machines: machineIds, kernels: chosen };
    setQueryState(next);
    const qs = encodeNewRunQuery(next);
    setSearchParams(machineIds.length === 0 ? (qs ? `machines=&${qs}` : 'machines=') : qs, { replace: true });
  };
  // Opened before the agent came online (a fresh `make run`): once one machine is online it is ticked,
  // unless the user has chosen (or cleared) machines meanwhile; the first change keeps it.
  const untouched = query.machines.length === 0 && !searchParams.has('machines');
  return { query: untouched ? { ...query, machines: onlyOnline(machines) } : query, setQuery };
}

/**
 * Each kernel's parameter values and sweep choices, local to the form (or from the run repeated); a
 * change clears the error `clearError` is given for its field (and for the items, on a sweep).
 */
export function useKernelInputs(clearError: (key: string) => void, repeat?: RepeatedForm) {
  const [paramValues, setParamValues] = useState<Record<string, Record<string, FormValue>>>(repeat?.values ?? {});
  const [sweepChoices, setSweepChoices] = useState<Record<string, Record<string, SweepChoice>>>(repeat?.sweeps ?? {});
  const valuesOf = (k: Kernel): Record<string, FormValue> => {
    const own = paramValues[k.id] ?? {};
    return Object.fromEntries(k.params.map((p) => [p.name, own[p.name] ?? initialFormValue(p)]));
  };
  const sweepsOf = (k: Kernel): Record<string, SweepChoice> => sweepChoices[k.id] ?? {};
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
  return { valuesOf, sweepsOf, onParam, onSweep };
}

/** A ref for the form and `refuse`, which after each refused submit brings the first marked field into view. */
function useRefusalFocus() {
  const [refusals, setRefusals] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (refusals > 0 && formRef.current) focusFirstInvalid(formRef.current);
  }, [refusals]);
  return { formRef, refuse: () => setRefusals((n) => n + 1) };
}

/**
 * The form's field errors and the server's refusal; `submit` posts a built request (or marks the fields
 * it names) and on success opens the run or batch.
 */
export function useRunSubmit() {
  const [errors, setErrors] = useState<FormErrors>({});
  const [submitError, setSubmitError] = useState<SubmitError | null>(null);
  const { formRef, refuse } = useRefusalFocus();
  const createRun = useCreateRun();
  const navigate = useNavigate();
  const clearError = (key: string) => setErrors(({ [key]: _, ...rest }) => rest);
  const submit = (built: ReturnType<typeof buildRunRequest>) => {
    if (!built.ok) {
      setErrors(built.errors);
      refuse();
      return;
    }
    setErrors({});
    createRun.mutate(built.request, {
      onSuccess: (created) =>
        navigate(created.kind === 'batch' ? batchPath(created.batch.batch_id) : runPath(created.run.id)),
      onError: (err) => {
        if (err instanceof ApiError) setErrors(formErrorsFromServer(err.fieldErrors, built.request));
        setSubmitError(describeSubmitError(err));
        refuse();
      },
    });
  };
  return { formRef, errors, clearError, submitError, setSubmitError, submit, pending: createRun.isPending };
}

/** How long the run takes, with launch costs learnt on the machine when only one is chosen. */
export function useRunEstimate(kernels: Kernel[], count: ItemCount, settings: ProfileSettings, machineIds: string[]): RunEstimate | null {
  const overheads = useLaunchOverheads(machineIds.length === 1 ? machineIds[0]! : null);
  if (count.perRun === null) return null;
  return estimateRun(
    kernels.map((k, i) => ({ kernel: k.id, items: count.perKernel[i] ?? 0 })),
    settings,
    machineIds.length === 1 ? overheads.data : undefined,
  );
}

/** Profile, repetitions and min time as typed (or from the run repeated), and the settings they make. */
export function useRunSettings(limits: Limits, repeat?: RepeatedForm) {
  const [profile, setProfile] = useState<Profile>(repeat?.profile ?? limits.default_profile);
  const [repetitions, setRepetitions] = useState(repeat?.repetitions ?? '');
  const [minTime, setMinTime] = useState(repeat?.minTime ?? '');
  const launches = repeat?.launches;
  const settings = effectiveSettings(profileSettings(limits, profile), repetitions, minTime, launches);
  const thin = limits.profiles[profile]?.thin_sweeps ?? false;
  return { profile, setProfile, repetitions, setRepetitions, minTime, setMinTime, launches, settings, thin };
}
