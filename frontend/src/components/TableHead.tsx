// A table's header row from a list of columns: plain words, or a column with a class ("num" right-aligns
// numbers) and a tooltip. One place for the markup every table repeated.
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
              {c.label}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}
