import { Link } from 'react-router';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

export function NotFoundPage() {
  useDocumentTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. Go to the <Link to={paths.machines}>machines</Link> or the{' '}
        <Link to={paths.runs}>runs</Link>.
      </p>
    </>
  );
}

export default NotFoundPage;
