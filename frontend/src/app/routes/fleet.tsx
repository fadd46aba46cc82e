import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { Select } from '@/components/Form';
import { decodeFleetView, encodeFleetView, FleetChangesList, PeerOutliersList, RANGES, type FleetView } from '@/features/fleet-changes';
import { paths, withQuery } from '../paths';
import { useDocumentTitle } from './title';

const RANGE_OPTIONS = RANGES.map((d) => ({ value: String(d), label: `the last ${d} days` }));

/** /fleet: steps several hosts took together (fleet changes), and machines far from their hardware class. */
export function FleetPage() {
  useDocumentTitle('Fleet');
  const [search] = useSearchParams();
  const view = decodeFleetView(search);
  const navigate = useNavigate();
  // "Now" is fixed while the page is open, so the range (and its cached answer) stays one range.
  const [now] = useState(() => new Date());
  const [kernel, setKernel] = useState(view.kernel);
  const go = (next: FleetView) => void navigate(withQuery(paths.fleet, encodeFleetView(next)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    go({ ...view, kernel });
  };
  return (
    <>
      <h1>Fleet</h1>
      <p className="lead">
        When one kernel point steps on several hosts in the same window (History&apos;s rule, as alerts use it), that is one fleet change: what the stepping hosts&apos;
        facts changed alike, and whether the hosts that measured the point then without a step made that change too. Below it, machines whose latest figure is an
        outlier among the machines of their hardware class.
      </p>
      <form className="toolbar" onSubmit={submit}>
        <label>
          Range <Select aria-label="Range" data-testid="fleet-range" value={String(view.days)} onChange={(e) => go({ ...view, days: Number(e.target.value) })} options={RANGE_OPTIONS} />
        </label>{' '}
        <label>
          Kernel <input data-testid="fleet-kernel" value={kernel} placeholder="every kernel" maxLength={200} onChange={(e) => setKernel(e.target.value)} />
        </label>{' '}
        <button type="submit" className="button">
          Show
        </button>
      </form>
      <h2>Fleet changes</h2>
      <FleetChangesList view={view} now={now} />
      <h2>Peer outliers</h2>
      <PeerOutliersList view={view} />
    </>
  );
}

export default FleetPage;
