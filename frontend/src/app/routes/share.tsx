import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { QueryFallback } from '@/components/Feedback';
import { useShare } from '@/features/compare/api/compare';
import { CompareBody } from '@/features/compare/components/CompareBody';
import { comparePath, isWellFormedSlug, viewFromShare, type CompareView } from '@/lib/compare-query';
import { formatDateTime } from '@/lib/format';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

function ShareNotFound({ slug }: { slug: string }) {
  return (
    <>
      <h1>Share not found</h1>
      <p data-testid="share-not-found">
        There is no shared comparison <code>{slug}</code> on this server (404). Check the link, or start a{' '}
        <Link to={paths.compare}>new comparison</Link>.
      </p>
    </>
  );
}

/** A frozen comparison: the numbers stored when it was shared, read-only and the same forever. */
export function SharePage() {
  const { slug = '' } = useParams();
  useDocumentTitle('Shared comparison');
  const wellFormed = isWellFormedSlug(slug);
  const share = useShare(slug, wellFormed);
  // Sorting, the chart scale and the chosen cell start from the share and stay in this page.
  const [local, setLocal] = useState<Partial<CompareView>>({});

  if (!wellFormed) return <ShareNotFound slug={slug} />;
  if (!share.isSuccess) return <QueryFallback query={share} what="the shared comparison" notFound={<ShareNotFound slug={slug} />} />;
  const s = share.data;
  const view = { ...viewFromShare(s.view), ...local };
  const data = s.compare;
  const live = <Link to={comparePath({ ...view, runs: view.runs, cell: null })}>Open the live comparison</Link>;
  if (data === null) {
    // Shares stored before the server froze its answers (migration 0003) keep only their view.
    return (
      <>
        <h1>Shared comparison</h1>
        <p data-testid="share-unfrozen">
          This comparison was shared on {formatDateTime(s.created_at)}, before the server kept the numbers of a share. {live} to
          see the latest results of the same machines and kernels.
        </p>
      </>
    );
  }
  return (
    <>
      <h1>Shared comparison</h1>
      <div className="message message-frozen" role="note" data-testid="frozen-banner">
        Frozen on {formatDateTime(s.created_at)}: these numbers will not change. {live} for the latest results.
      </div>
      <p className="lead">
        {data.machines.map((m) => m.name).join(' vs ')}, baseline {data.machines.find((m) => m.id === data.baseline)?.name ?? data.baseline};{' '}
        {s.result_ids.length} results.
      </p>
      <CompareBody
        data={data}
        view={view}
        onView={(patch) => setLocal((prev) => ({ ...prev, ...patch }))}
        sharedFacts={Array.isArray(s.view.facts) ? s.view.facts.map(String) : undefined}
      />
    </>
  );
}

export default SharePage;
