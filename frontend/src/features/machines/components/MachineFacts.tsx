import { Meta } from '@/components/Meta';
import type { MachineFacts as Facts } from '@/lib/api-types';
import { keyFacts } from '../utils/key-facts';

export function MachineFacts({ facts }: { facts: Facts }) {
  return (
    <dl className="facts">
      {keyFacts(facts).map(({ label, value }) => (
        <Meta key={label} term={label} className={value ? undefined : 'muted'}>
          {value || 'unknown'}
        </Meta>
      ))}
    </dl>
  );
}
