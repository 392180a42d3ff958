'use client';
import type { ReactNode } from 'react';
import { useUrlState } from './url-state';

/** One button of a list's paging (Previous, Next; the Audit log's Newest, Older). */
export function PageButton({
  disabled,
  onClick,
  children,
}: {
  disabled: boolean;
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      disabled={disabled}
      onClick={onClick}
      className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700"
    >
      {children}
    </button>
  );
}

/** Previous and Next through the URL's `page` (left out on page 1, so page 1 has one address). */
export function PageButtons({ page, hasNext }: { page: number; hasNext: boolean }) {
  const { set } = useUrlState();
  return (
    <>
      <PageButton disabled={page <= 1} onClick={() => set({ page: page - 1 > 1 ? page - 1 : null })}>
        Previous
      </PageButton>
      <PageButton disabled={!hasNext} onClick={() => set({ page: page + 1 })}>
        Next
      </PageButton>
    </>
  );
}
