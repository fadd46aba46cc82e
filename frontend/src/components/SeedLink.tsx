import { Link } from 'react-router';
import { seedTooltip } from '@/lib/seeds';
import { paths } from '@/app/paths';

/** "Seed 000", linked to the kernels page's list of seeds, its write-up named in the tooltip. */
export function SeedLink({ seed }: { seed: string }) {
  return (
    <Link to={`${paths.kernels}#seed-${seed}`} title={seedTooltip(seed)} data-testid="seed-link">
      Seed {seed}
    </Link>
  );
}
