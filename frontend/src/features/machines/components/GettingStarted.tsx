import { Link } from 'react-router';
import type { Machine } from '@/lib/api-types';
import { newRunPath } from '@/lib/query-state';
import { AddHostLink } from './AddHostLink';

/**
 * What to do next on a server with machines but no run yet: start one on an online machine (with the
 * quick profile it takes seconds), then add the other hosts to compare against.
 */
export function GettingStarted({ machines }: { machines: Machine[] }) {
  const online = machines.find((m) => m.online);
  return (
    <section className="card getting-started" data-testid="getting-started" aria-labelledby="getting-started-heading">
      <h2 id="getting-started-heading">Next: measure something</h2>
      <ol>
        <li>
          {online ? (
            <>
              <Link className="button button-primary" to={newRunPath({ machines: [online.id] })} data-testid="start-first-run">
                Start a run on {online.name}
              </Link>{' '}
              <span className="muted">pick a few kernels; the quick profile takes seconds.</span>
            </>
          ) : (
            <>
              <Link className="button button-primary" to={newRunPath({ machines: [] })} data-testid="start-first-run">
                Start a run
              </Link>{' '}
              <span className="muted">no agent is online right now: a run waits in its machine&apos;s queue until it connects.</span>
            </>
          )}
        </li>
        <li>
          <AddHostLink>create a join token and run the one-line installer on each machine to compare.</AddHostLink>
        </li>
        <li>
          <span className="muted">
            Then tick two machines below and <strong>Compare</strong> them, or open a kernel&apos;s page to see it on every machine.
          </span>
        </li>
      </ol>
    </section>
  );
}
