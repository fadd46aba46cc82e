import type { MachineFacts as Facts } from '@/lib/api-types';
import { keyFacts } from '../utils/key-facts';

export function MachineFacts({ facts }: { facts: Facts }) {
  return (
    <dl className="facts">
      {keyFacts(facts).map(({ label, value }) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd className={value ? undefined : 'muted'}>{value || 'unknown'}</dd>
        </div>
      ))}
    </dl>
  );
}
