import type { ReactNode } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { Field, Select, SubmitActions } from '@/components/Form';
import { MIN_TIME_S, REPETITIONS, type Kernel, type Machine, type Profile } from '@/lib/api-types';
import { formatEstimate, guessLaunchCost, repsPerLaunch, type RunEstimate } from '@/features/runs/utils/estimate';
import type { FormErrors } from '@/features/runs/utils/run-request';
import type { SubmitError } from '@/features/runs/utils/submit-error';
import { profileHelp, profileNames, type Limits, type ProfileSettings } from '@/lib/limits';
import type { ItemCount } from '@/lib/sweep';
import { MissingKernels } from './KernelPicker';
import { MachinePicker } from './MachinePicker';

/** The machine picker with what the choice means: unknown ids, offline machines, a batch. */
export function MachineField(props: {
  machines: Machine[];
  byId: Map<string, Machine>;
  /** The ids in the URL, known or not. */
  requested: string[];
  chosenIds: string[];
  error?: string;
  onChange: (ids: string[]) => void;
  /** The machines could not be refreshed: their states are not known. */
  stale?: boolean;
}) {
  const { machines, byId, requested, chosenIds, error, onChange, stale } = props;
  const unknownIds = requested.filter((id) => !byId.has(id));
  const offline = chosenIds.map((id) => byId.get(id)).filter((m): m is Machine => m !== undefined && !m.online);
  return (
    <div className="field">
      <MachinePicker machines={machines} chosen={chosenIds} onChange={onChange} invalid={!!error} stale={stale} />
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
      {error && <div className="field-error">{error}</div>}
    </div>
  );
}

/** The kernels on every chosen machine (the picker, given as children), and those missing somewhere. */
export function KernelsSection(props: {
  machineCount: number;
  error?: string;
  empty: boolean;
  missing: { kernel: Kernel; missingOn: string[] }[];
  machines: Map<string, Machine>;
  children: ReactNode;
}) {
  const { machineCount, error, empty, missing, machines, children } = props;
  return (
    <section aria-labelledby="kernels-heading">
      <h2 id="kernels-heading">Kernels</h2>
      {error && (
        <div id="kernels-error" className="field-error">
          {error}
        </div>
      )}
      {empty ? (
        <p className="muted">{machineCount === 1 ? "This machine's agent lists no kernels." : 'No kernel is on every chosen machine.'}</p>
      ) : (
        children
      )}
      <MissingKernels missing={missing} machines={machines} />
    </section>
  );
}

/** A number that overrides the profile's (empty: the profile's), within the server's bounds. */
function OverrideField(props: {
  id: string;
  label: string;
  bounds: { minimum: number; maximum: number };
  step: number | 'any';
  value: string;
  onChange: (v: string) => void;
  error: string | undefined;
  hint: string;
}) {
  const { id, label, bounds, step, value, onChange, error, hint } = props;
  return (
    <Field id={id} label={label} error={error}>
      <input
        id={id}
        type="number"
        min={bounds.minimum}
        max={bounds.maximum}
        step={step}
        value={value}
        placeholder="profile's"
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
      />
      <div className="muted small">{hint}; empty: the profile's</div>
    </Field>
  );
}

/** Profile, repetitions and min time: the run's measuring settings. */
export function RunSettingsRow(props: {
  limits: Limits;
  profile: Profile;
  setProfile: (p: Profile) => void;
  repetitions: string;
  setRepetitions: (v: string) => void;
  minTime: string;
  setMinTime: (v: string) => void;
  errors: FormErrors;
}) {
  const { limits, profile, setProfile, repetitions, setRepetitions, minTime, setMinTime, errors } = props;
  return (
    <div className="row">
      <Field id="profile" label="Profile">
        <Select id="profile" value={profile} onChange={(e) => setProfile(e.target.value as Profile)} aria-describedby="profile-help" options={profileNames(limits)} />
        <div id="profile-help" className="muted small">
          {profileHelp(limits, profile)}
        </div>
      </Field>
      <OverrideField
        id="repetitions"
        label="Repetitions"
        bounds={REPETITIONS}
        step={1}
        value={repetitions}
        onChange={setRepetitions}
        error={errors.repetitions}
        hint={`samples per item (${REPETITIONS.minimum}–${REPETITIONS.maximum})`}
      />
      <OverrideField id="min-time" label="Min time (s)" bounds={MIN_TIME_S} step="any" value={minTime} onChange={setMinTime} error={errors.min_time_s} hint="per repetition" />
    </div>
  );
}

/** Why the server did not start the run, or how many fields are marked; nothing when neither. */
export function FormErrorSummary({ submitError, errors }: { submitError: SubmitError | null; errors: FormErrors }) {
  const marked = Object.keys(errors).length;
  if (!submitError && marked === 0) return null;
  return (
    <div id="form-errors" tabIndex={-1}>
      {submitError ? (
        <ErrorMessage title={submitError.title} error={submitError.message} />
      ) : (
        <div className="message message-error" role="alert">
          Please fix the {marked === 1 ? 'marked field' : `${marked} marked fields`}: each says what is wrong beside it.
        </div>
      )}
    </div>
  );
}

/** The start button, how many items the run will have and about how long it will take. */
export function StartActions(props: {
  pending: boolean;
  machineCount: number;
  kernelCount: number;
  count: ItemCount;
  estimate: RunEstimate | null;
  settings: ProfileSettings;
}) {
  const { pending, machineCount, kernelCount, count, estimate, settings } = props;
  return (
    <SubmitActions label={machineCount > 1 ? `Start ${machineCount} runs` : 'Start run'} busy="Starting…" pending={pending}>
      {kernelCount > 0 && (
        <span className="muted" data-testid="item-count">
          {count.perRun === null
            ? 'fix the sweeps to see how many items'
            : machineCount > 1
              ? `${count.perRun} ${count.perRun === 1 ? 'item' : 'items'} per machine × ${machineCount} machines = ${count.total} items`
              : `${count.perRun} ${count.perRun === 1 ? 'item' : 'items'}`}
          {` from ${kernelCount} ${kernelCount === 1 ? 'kernel' : 'kernels'}`}
        </span>
      )}
      {kernelCount > 0 && estimate && (
        <span className="muted" data-testid="run-estimate" title={estimateHow(settings, estimate.learnt)}>
          {formatEstimate(estimate.seconds)}
          {machineCount > 1 ? ' per machine, side by side' : ''} (estimate: {count.perRun}{' '}
          {count.perRun === 1 ? 'item' : 'items'} × {settings.launches} launches × {repsPerLaunch(settings.repetitions, settings.launches)}{' '}
          repetitions × {settings.minTimeS} s, plus each launch's start
          {estimate.learnt > 0 ? `, learnt from earlier runs here for ${estimate.learnt} of ${kernelCount} kernels` : ''})
        </span>
      )}
    </SubmitActions>
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
    ' Each repetition is a block of short samples (shorter than a scheduler slice) whose 5th percentile is its' +
    ' value, so a busy host barely moves the figure; what the host took is shown beside each result.'
  );
}
