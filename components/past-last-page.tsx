'use client';
import Link from 'next/link';
import { count } from '@/lib/dashboard/format';
import { useUrlState } from './url-state';

/** The last page of `total` rows, `pageSize` a page (1 when there are none). */
const lastPage = (total: number, pageSize: number) => Math.max(1, Math.ceil(total / pageSize));

/** Said instead of "nothing matches" when rows match but the page asked for is past the last one. */
export function PastLastPage({ page, total, pageSize }: { page: number; total: number; pageSize: number }) {
  const { search } = useUrlState();
  const last = lastPage(total, pageSize);
  const next = new URLSearchParams(search.toString());
  if (last > 1) next.set('page', String(last));
  else next.delete('page');
  return (
    <p className="py-6 text-center text-sm" role="status" data-testid="past-last-page">
      Page {count(page)} is past the last page ({count(last)}) of {count(total)} matching rows;{' '}
      <Link href={`?${next}`} className="text-sky-700 underline dark:text-sky-400">
        go to page {count(last)}
      </Link>
      .
    </p>
  );
}
