'use client';
import { type ReactNode, useCallback, useMemo, useState } from 'react';
import { PastLastPage } from './past-last-page';

/**
 * The dashboard's one table of rows, with what paged and selectable lists share: muted,
 * small-caps column headers (`head`: the header cells), a "select every row shown" box before
 * them (`selectAll`), and under the rows, when they are missing, why: a page past the last one
 * (`paging`, from pageRange) or nothing matching (`empty`).
 */
export function ListTable({
  head,
  children,
  selectAll,
  paging,
  empty,
}: {
  head: ReactNode;
  children: ReactNode;
  selectAll?: SelectAll;
  paging?: { range: PageRange; page: number; pageSize: number };
  /** said when no row matches at all */
  empty?: ReactNode;
}) {
  return (
    <>
      <table className="w-full text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-muted dark:border-zinc-800">
          <tr>
            {selectAll && (
              <th className="py-2 pr-2">
                <input
                  type="checkbox"
                  aria-label={selectAll.label}
                  checked={selectAll.checked}
                  disabled={selectAll.disabled}
                  onChange={(e) => selectAll.onChange(e.target.checked)}
                />
              </th>
            )}
            {head}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
      {paging?.range.pastLast && (
        <PastLastPage page={paging.page} total={paging.range.total} pageSize={paging.pageSize} />
      )}
      {empty}
    </>
  );
}

interface SelectAll {
  label: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (on: boolean) => void;
}

/** A row's selection box, in its own cell. */
export function SelectCell({
  label,
  checked,
  disabled,
  onChange,
}: {
  label: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (on: boolean) => void;
}) {
  return (
    <td className="py-2 pr-2">
      <input
        type="checkbox"
        aria-label={label}
        checked={checked}
        disabled={disabled}
        onChange={(e) => onChange(e.target.checked)}
      />
    </td>
  );
}

export interface PageRange {
  total: number;
  /** rows first–last of `total` are shown (0–0 when none are) */
  first: number;
  last: number;
  /** rows match, but the page asked for is past the last one */
  pastLast: boolean;
  hasNext: boolean;
}

/** Where page `page` (from 1, `pageSize` rows a page, `rows` of them on it) stands among `total` rows. */
export function pageRange(page: number, pageSize: number, total: number, rows: number): PageRange {
  const pastLast = total > 0 && rows === 0;
  const first = total === 0 || pastLast ? 0 : (page - 1) * pageSize + 1;
  const last = pastLast ? 0 : Math.min(page * pageSize, total);
  return { total, first, last, pastLast, hasNext: !pastLast && last < total };
}

/** The page asked for in the URL's `page` (1 when absent or not a number). */
export const pageOf = (asked: string | undefined) => Math.max(1, Number(asked ?? 1) || 1);

/**
 * The rows an operator selected among `rows` (those that may be selected), by key. The selection
 * is emptied when `resetWhen` changes (new filters), if given; a selected row no longer among
 * `rows` stays selected but is not `chosen`.
 */
export function useSelection<T>(rows: T[], keyOf: (row: T) => string, resetWhen?: string) {
  const [selected, setSelected] = useState<Map<string, T>>(new Map());
  const [selectedFor, setSelectedFor] = useState(resetWhen);
  if (selectedFor !== resetWhen) {
    setSelectedFor(resetWhen);
    setSelected(new Map());
  }
  const chosen = useMemo(() => rows.filter((r) => selected.has(keyOf(r))), [rows, selected, keyOf]);
  const allChosen = rows.length > 0 && chosen.length === rows.length;
  const toggle = useCallback(
    (row: T, on: boolean) =>
      setSelected((m) => {
        const next = new Map(m);
        if (on) next.set(keyOf(row), row);
        else next.delete(keyOf(row));
        return next;
      }),
    [keyOf],
  );
  const setAll = (on: boolean) => setSelected(on ? new Map(rows.map((r) => [keyOf(r), r])) : new Map());
  /** Unselect these keys (rows acted on), or every row. */
  const clear = (keys?: Iterable<string>) =>
    setSelected((m) => {
      if (!keys) return new Map();
      const next = new Map(m);
      for (const k of keys) next.delete(k);
      return next;
    });
  const isSelected = (row: T) => selected.has(keyOf(row));
  return { selected, chosen, allChosen, toggle, setAll, clear, isSelected };
}
