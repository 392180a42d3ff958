'use client';
import { useUrlState } from './url-state';

const button = 'rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700';

/** Previous and Next through the URL's `page` (left out on page 1, so page 1 has one address). */
export function PageButtons({ page, hasNext }: { page: number; hasNext: boolean }) {
  const { set } = useUrlState();
  return (
    <>
      <button
        type="button"
        disabled={page <= 1}
        onClick={() => set({ page: page - 1 > 1 ? page - 1 : null })}
        className={button}
      >
        Previous
      </button>
      <button type="button" disabled={!hasNext} onClick={() => set({ page: page + 1 })} className={button}>
        Next
      </button>
    </>
  );
}
