import { ErrorMessage, Loading } from '@/components/Feedback';
import { useTokens } from '@/features/auth/api/tokens';
import { CreateTokenForm } from '@/features/auth/components/CreateTokenForm';
import { TokensTable } from '@/features/auth/components/TokensTable';
import { useDocumentTitle } from './title';

/** /tokens (admin): API tokens for scripts and CI, so they need not share the admin's. */
export function TokensPage() {
  useDocumentTitle('API tokens');
  const tokens = useTokens();
  return (
    <>
      <h1>API tokens</h1>
      <p className="lead">
        Scripts and CI send a token as <code>authorization: Bearer &lt;token&gt;</code>. The server stores only a hash: a
        new token's secret is shown once.
      </p>
      <section>
        <h2>New token</h2>
        <CreateTokenForm />
      </section>
      <section>
        <h2>Tokens</h2>
        {tokens.isPending && <Loading what="the tokens" />}
        {tokens.isError && <ErrorMessage title="Could not load the tokens:" error={tokens.error} />}
        {tokens.data && <TokensTable tokens={tokens.data} />}
      </section>
    </>
  );
}

export default TokensPage;
