import { useState } from 'react';
import { firstSentence, searchKernels } from '@/features/kernels';
import type { Kernel, Machine, Profile } from '@/lib/api-types';
import { formatMeasure } from '@/lib/format';
import type { FormValue } from '@/lib/params';
import type { FormErrors } from '@/features/runs/utils/run-request';
import { kernelItemCount, type SweepChoice } from '@/lib/sweep';
import { ParamInput } from './ParamInput';
import { KernelText } from '@/components/KernelText';
import { seedTooltip } from '@/lib/seeds';

interface Props {
  groups: [string, Kernel[]][];
  selected: Set<string>;
  values: (kernel: Kernel) => Record<string, FormValue>;
  sweeps: (kernel: Kernel) => Record<string, SweepChoice>;
  profile: Profile;
  /** The profile thins default sweeps (its `thin_sweeps`, GET /limits). */
  thin: boolean;
  errors: FormErrors;
  onToggle: (kernelId: string, on: boolean) => void;
  onParam: (kernelId: string, name: string, value: FormValue) => void;
  onSweep: (kernelId: string, name: string, choice: SweepChoice | null) => void;
  /** The form says no kernel is chosen (or too many items): the search box carries the mark. */
  searchInvalid?: boolean;
}

/** The seed's figure in a few words, its machine in the tooltip. */
function SeedFigure({ kernel }: { kernel: Kernel }) {
  const s = kernel.seed_reference;
  if (!s) return null;
  return (
    <span className="seed-inline muted small" title={`${seedTooltip(s.seed)} Measured on ${s.machine}.`}>
      seed {s.seed}: <strong>{formatMeasure(s.value, s.unit)}</strong>
    </span>
  );
}

/**
 * A kernel's first sentence; "more" shows the whole description and the seed's figure with its machine
 * and note (41 full paragraphs made a page of 7,000 px). The seed's figure alone sits in the kernel's
 * head line (SeedFigure).
 */
function About({ kernel }: { kernel: Kernel }) {
  const [full, setFull] = useState(false);
  const short = firstSentence(kernel.description);
  const seed = kernel.seed_reference;
  const more = short !== kernel.description.trim() || !!seed;
  const toggle = more && (
    <button
      type="button"
      className="link-button"
      aria-expanded={full}
      aria-label={`${full ? 'Less' : 'More'} about ${kernel.id}`}
      onClick={() => setFull(!full)}
    >
      {full ? 'less' : 'more'}
    </button>
  );
  return (
    <>
      <p className="kernel-desc small" data-testid="kernel-desc">
        <KernelText text={full ? kernel.description : short} /> {toggle}
      </p>
      {seed && full && (
        <div className="seed small">
          <abbr title={seedTooltip(seed.seed)}>Seed {seed.seed}</abbr>: <strong>{formatMeasure(seed.value, seed.unit)}</strong> on {seed.machine}
          {seed.note ? (
            <span className="muted">
              {' '}
              — <KernelText text={seed.note} />
            </span>
          ) : null}
        </div>
      )}
    </>
  );
}

/** One kernel: its checkbox, seed figure and description; chosen, its parameters. */
function KernelOption(props: Pick<Props, 'values' | 'sweeps' | 'profile' | 'thin' | 'errors' | 'onToggle' | 'onParam' | 'onSweep'> & { kernel: Kernel; checked: boolean }) {
  const { kernel: k, checked, values, sweeps, profile, thin, errors, onToggle, onParam, onSweep } = props;
  const boxId = `kernel-${k.id}`;
  const v = values(k);
  const s = sweeps(k);
  const count = checked ? kernelItemCount(k.params, s, thin) : null;
  return (
    <div className={`kernel${checked ? ' kernel-chosen' : ''}`} data-testid="kernel-option">
      <div className="kernel-head">
        <input id={boxId} type="checkbox" checked={checked} onChange={(e) => onToggle(k.id, e.target.checked)} />
        <label htmlFor={boxId}>
          <span className="strong">{k.title}</span> <code>{k.id}</code> <span className="muted small">{k.unit}</span>
        </label>
        <SeedFigure kernel={k} />
        {checked && Object.keys(s).length > 0 && (
          <span className="badge badge-sweep" data-testid="kernel-item-count">
            {count === null ? 'sweep not valid yet' : `${count} ${count === 1 ? 'item' : 'items'}`}
          </span>
        )}
      </div>
      <About kernel={k} />
      {checked && k.params.length > 0 && (
        <div className="params">
          {k.params.map((p) => (
            <ParamInput
              key={p.name}
              id={`param-${k.id}-${p.name}`}
              spec={p}
              value={v[p.name] ?? ''}
              error={errors[`${k.id}.${p.name}`]}
              onChange={(value) => onParam(k.id, p.name, value)}
              sweep={s[p.name]}
              onSweep={(choice) => onSweep(k.id, p.name, choice)}
              profile={profile}
              thin={thin}
            />
          ))}
        </div>
      )}
      {checked && k.params.length === 0 && <p className="muted small params">No parameters.</p>}
    </div>
  );
}

/** A family's legend: the button that folds it, with how many kernels it has and how many are chosen. */
function FamilyLegend(props: { family: string; members: Kernel[]; chosen: number; open: boolean; searching: boolean; onFold: () => void }) {
  const { family, members, chosen, open, searching, onFold } = props;
  return (
    <legend>
      <button type="button" className="family-toggle" aria-expanded={open} disabled={searching} onClick={onFold}>
        <span aria-hidden="true" className="family-caret">
          {open ? '▾' : '▸'}
        </span>{' '}
        {family}{' '}
        <span className="muted small">
          {members.length} {members.length === 1 ? 'kernel' : 'kernels'}
          {chosen > 0 ? `, ${chosen} chosen` : ''}
        </span>
      </button>
    </legend>
  );
}

/** The search box, how many kernels match or are chosen, and fold/unfold all (when not searching). */
function KernelToolbar(props: { search: string; onSearch: (q: string) => void; searchInvalid?: boolean; count: string; onFoldAll: ((on: boolean) => void) | null }) {
  const { search, onSearch, searchInvalid, count, onFoldAll } = props;
  return (
    <div className="toolbar kernel-toolbar">
      <label htmlFor="kernel-search">Search kernels</label>
      <input
        id="kernel-search"
        type="search"
        value={search}
        placeholder="id, family or words of the description"
        onChange={(e) => onSearch(e.target.value)}
        // Enter in a search box looks for something; in this form it would otherwise start the run.
        onKeyDown={(e) => e.key === 'Enter' && e.preventDefault()}
        aria-invalid={searchInvalid ? true : undefined}
        aria-describedby={searchInvalid ? 'kernels-error' : undefined}
      />
      <span className="muted small" data-testid="kernel-search-count">
        {count}
      </span>
      {onFoldAll && (
        <span className="fold-all">
          <button type="button" className="link-button small" onClick={() => onFoldAll(false)}>
            Unfold all
          </button>
          <button type="button" className="link-button small" onClick={() => onFoldAll(true)}>
            Fold all
          </button>
        </span>
      )}
    </div>
  );
}

/**
 * The kernels every chosen machine has, by family, each with a checkbox; a chosen kernel shows its
 * parameters. A search box (id, title, family, description, parameter names) narrows the list and a
 * family folds away; a chosen kernel always stays in sight, so its parameters and their errors do too.
 */
export function KernelPicker({ groups, selected, searchInvalid, ...option }: Props) {
  const [search, setSearch] = useState('');
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const all = groups.flatMap(([, ks]) => ks);
  const searching = search.trim() !== '';
  // Best match first: searching, the family of the best match leads, and its best kernels (chosen ones
  // that do not match after them).
  const rank = new Map(searchKernels(all, { q: search, family: null }).map((k, i) => [k.id, i]));
  const matching = new Set(rank.keys());
  const byRank = (k: Kernel) => rank.get(k.id) ?? Number.MAX_SAFE_INTEGER;
  const listed = groups
    .map(([family, ks]) => {
      const open = searching || !folded.has(family);
      const visible = ks.filter((k) => selected.has(k.id) || (open && matching.has(k.id)));
      return [family, ks, searching ? [...visible].sort((a, b) => byRank(a) - byRank(b)) : visible, open] as const;
    })
    .filter(([, ks]) => !searching || ks.some((k) => matching.has(k.id) || selected.has(k.id)));
  const best = (ks: readonly Kernel[]) => Math.min(Number.MAX_SAFE_INTEGER, ...ks.map(byRank));
  const shown = searching ? [...listed].sort((a, b) => best(a[2]) - best(b[2])) : listed;
  const fold = (family: string, on: boolean) =>
    setFolded((prev) => {
      const next = new Set(prev);
      if (on) next.add(family);
      else next.delete(family);
      return next;
    });
  const count =
    (searching ? `${matching.size} of ${all.length} kernels match` : `${all.length} kernels`) + (selected.size > 0 ? `, ${selected.size} chosen` : '');
  return (
    <div className="kernel-groups">
      <KernelToolbar
        search={search}
        onSearch={setSearch}
        searchInvalid={searchInvalid}
        count={count}
        onFoldAll={searching ? null : (on) => setFolded(on ? new Set(groups.map(([f]) => f)) : new Set())}
      />
      {searching && matching.size === 0 && <p className="muted">No kernel matches “{search.trim()}”.</p>}
      {shown.map(([family, members, kernels, open]) => (
        <fieldset key={family} className="kernel-family" data-testid="kernel-family" data-family={family}>
          <FamilyLegend
            family={family}
            members={members}
            chosen={members.filter((k) => selected.has(k.id)).length}
            open={open}
            searching={searching}
            onFold={() => fold(family, open)}
          />
          {kernels.map((k) => (
            <KernelOption key={k.id} kernel={k} checked={selected.has(k.id)} {...option} />
          ))}
        </fieldset>
      ))}
    </div>
  );
}

/** Kernels that some chosen machine has and another lacks, and why they cannot be chosen. */
export function MissingKernels({ missing, machines }: { missing: { kernel: Kernel; missingOn: string[] }[]; machines: Map<string, Machine> }) {
  if (missing.length === 0) return null;
  return (
    <details className="missing-kernels small" data-testid="missing-kernels">
      <summary>
        {missing.length} {missing.length === 1 ? 'kernel is' : 'kernels are'} not on every chosen machine
      </summary>
      <ul>
        {missing.map(({ kernel, missingOn }) => (
          <li key={kernel.id}>
            <code>{kernel.id}</code> <span className="muted">— missing on {missingOn.map((id) => machines.get(id)?.name ?? id).join(', ')}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
