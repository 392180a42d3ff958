import type { ReactNode } from 'react';

/** A page's list of rows under muted, small-caps column headers (`head`: the header cells). */
export function ListTable({ head, children }: { head: ReactNode; children: ReactNode }) {
  return (
    <table className="w-full text-left text-sm">
      <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-muted dark:border-zinc-800">
        <tr>{head}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
