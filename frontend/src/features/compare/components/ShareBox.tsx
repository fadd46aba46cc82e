import { useState } from 'react';
import { CopyField } from '@/components/CopyField';
import { ErrorMessage } from '@/components/Feedback';
import type { ShareFact } from '@/lib/api-types';
import { viewToShare, type CompareView } from '@/lib/compare-query';
import { useCreateShare } from '../api/compare';

/** The machine facts a share may show anyone with its link; the first ones (what a comparison needs) are
 * ticked by default, as the server's default. */
const FACTS: { fact: ShareFact; label: string; byDefault?: true }[] = [
  { fact: 'cpu_model', label: 'CPU model', byDefault: true },
  { fact: 'arch', label: 'architecture', byDefault: true },
  { fact: 'logical_cpus', label: 'logical CPUs', byDefault: true },
  { fact: 'physical_cores', label: 'cores', byDefault: true },
  { fact: 'smt_active', label: 'SMT', byDefault: true },
  { fact: 'memory_bytes', label: 'memory', byDefault: true },
  { fact: 'kernel_release', label: 'kernel', byDefault: true },
  { fact: 'virtualization', label: 'virtualization', byDefault: true },
  { fact: 'os_release', label: 'OS release' },
  { fact: 'governor', label: 'governor' },
  { fact: 'boost', label: 'boost' },
  { fact: 'clocksource', label: 'clocksource' },
  { fact: 'caches', label: 'caches' },
  { fact: 'extra', label: 'other settings' },
  { fact: 'load_average', label: 'load average' },
  { fact: 'preflight', label: 'preflight checks' },
  { fact: 'hostname', label: 'hostname' },
  { fact: 'kernel_cmdline', label: 'kernel command line' },
  { fact: 'vulnerabilities', label: 'CPU vulnerabilities' },
];
const DEFAULT_FACTS = FACTS.filter((f) => f.byDefault).map((f) => f.fact);

/** Which host facts the link shows: a fold-out list of boxes, the defaults ticked. */
function FactsChoice({ chosen, onChange }: { chosen: ShareFact[]; onChange: (facts: ShareFact[]) => void }) {
  return (
    <details data-testid="share-facts">
      <summary>
        Facts shown: {chosen.length} of {FACTS.length}
      </summary>
      <fieldset className="machine-picker">
        <legend>Host facts the link shows to anyone who has it</legend>
        <div className="toolbar">
          {FACTS.map(({ fact, label }) => (
            <label key={fact} className="small">
              <input
                type="checkbox"
                checked={chosen.includes(fact)}
                onChange={(e) => onChange(e.target.checked ? FACTS.map((f) => f.fact).filter((f) => f === fact || chosen.includes(f)) : chosen.filter((f) => f !== fact))}
              />{' '}
              {label}
            </label>
          ))}
        </div>
      </fieldset>
    </details>
  );
}

/** "Share": freezes this comparison on the server, with the host facts chosen, and shows its permanent
 * link with a copy button. */
export function ShareBox({ view }: { view: CompareView }) {
  const share = useCreateShare();
  const [facts, setFacts] = useState<ShareFact[]>(DEFAULT_FACTS);
  const link = share.data ? new URL(share.data.url, window.location.origin).toString() : null;
  return (
    <div className="share">
      <FactsChoice
        chosen={facts}
        onChange={(next) => {
          setFacts(next);
          share.reset(); // a link made with other facts is not this one
        }}
      />
      <button
        type="button"
        className="button button-primary"
        onClick={() => share.mutate({ view: viewToShare(view), facts })}
        disabled={share.isPending}
        title="Freeze these numbers under a permanent link"
      >
        {share.isPending ? 'Sharing…' : 'Share'}
      </button>
      {link && (
        <CopyField id="share-link" value={link} testId="share-link" label="Share link" size={48}>
          <a href={share.data!.url} target="_blank" rel="noreferrer">
            open
          </a>
        </CopyField>
      )}
      {share.isError && <ErrorMessage title="Could not share:" error={share.error} />}
    </div>
  );
}
