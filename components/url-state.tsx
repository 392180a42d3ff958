'use client';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useCallback, useEffect } from 'react';

/**
 * The query string of the last navigation asked for and not yet committed: a second filter set
 * before the first one's navigation lands must build on it, or the first one is lost from the URL
 * while its box still shows it.
 */
let pending: { path: string; qs: string } | null = null;

/**
 * Filters and selection live in the URL, so a link can be pasted into an incident channel; each
 * change is a history entry, so Back undoes a filter or a page turn.
 */
export function useUrlState() {
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const current = search.toString();
  useEffect(() => {
    if (pending && (pending.path !== pathname || pending.qs === current)) pending = null;
  }, [current, pathname]);
  useEffect(() => {
    const back = () => {
      pending = null;
    };
    window.addEventListener('popstate', back);
    return () => window.removeEventListener('popstate', back);
  }, []);
  const set = useCallback(
    (changes: Record<string, string | number | null | undefined>) => {
      const base = pending?.path === pathname ? pending.qs : search.toString();
      const next = new URLSearchParams(base);
      for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === undefined || v === '') next.delete(k);
        else next.set(k, String(v));
      }
      const qs = next.toString();
      if (qs === base) return; // no history entry that Back would have to skip
      pending = qs === search.toString() ? null : { path: pathname, qs };
      router.push(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
    },
    [router, pathname, search],
  );
  return { search, set };
}

/**
 * How a text filter matches, said in its label: names of things (queue, group) and ids match exactly, as
 * links from other pages need; free text (holder, partition, audit target) matches a substring in
 * any case; a threshold is exceeded. The server side does the same (`ilike` on an escaped pattern, `=` for names).
 */
export const MATCHING = {
  exact: 'exact name',
  id: 'exact id',
  contains: 'contains, any case',
  threshold: 'more than',
} as const;

/** A text filter that lands in the URL when the user presses Enter or leaves the field. */
export function UrlTextFilter({
  name,
  label,
  match,
  value,
  className = 'w-40',
}: {
  name: string;
  label: string;
  match: keyof typeof MATCHING;
  value: string | undefined;
  className?: string;
}) {
  const { set } = useUrlState();
  const commit = (v: string) => v !== (value ?? '') && set({ [name]: v, page: null, before: null });
  return (
    <label className="flex flex-col">
      <span className="text-xs text-muted">
        {label} <span className="font-normal">({MATCHING[match]})</span>
      </span>
      <input
        key={value ?? ''} // Back restores the URL's value, not the last one typed
        defaultValue={value ?? ''}
        placeholder={MATCHING[match]}
        aria-label={`${label} (${MATCHING[match]})`}
        onKeyDown={(e) => e.key === 'Enter' && commit((e.target as HTMLInputElement).value)}
        onBlur={(e) => commit(e.target.value)}
        className={`${className} rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900`}
      />
    </label>
  );
}
