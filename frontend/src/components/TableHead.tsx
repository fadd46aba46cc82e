// A table's header row from a list of columns: plain words, or a column with a class ("num" right-aligns
// numbers), a tooltip, or a name for screen readers only; and the table every list page draws, in its
// scrolling wrapper. One place for the markup every table repeated.
import type { ReactNode } from 'react';
import type { Column } from './table-columns';

export function TableHead({ columns }: { columns: readonly Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) =>
          typeof c === 'string' ? (
            <th key={i} scope="col">
              {c}
            </th>
          ) : (
            <th key={i} scope="col" className={c.className} title={c.title}>
              {c.hidden ? <span className="visually-hidden">{c.label}</span> : c.label}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}

/** A table with its header, its rows (`children`) and a note under it, scrolling sideways when wide. */
export function DataTable(props: { columns: readonly Column[]; testId?: string; className?: string; note?: ReactNode; children: ReactNode }) {
  const { columns, testId, className, note, children } = props;
  return (
    <div className="table-wrap">
      <table className={className ? `table ${className}` : 'table'} data-testid={testId}>
        <TableHead columns={columns} />
        <tbody>{children}</tbody>
      </table>
      {note}
    </div>
  );
}
