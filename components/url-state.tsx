'use client';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useCallback } from 'react';

/** Filters and selection live in the URL, so a link can be pasted into an incident channel. */
export function useUrlState() {
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const set = useCallback(
    (changes: Record<string, string | number | null | undefined>) => {
      const next = new URLSearchParams(search.toString());
      for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === undefined || v === '') next.delete(k);
        else next.set(k, String(v));
      }
      const qs = next.toString();
      router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
    },
    [router, pathname, search],
  );
  return { search, set };
}

/** A text filter that lands in the URL when the user presses Enter or leaves the field. */
export function UrlTextFilter({ name, label, value, className = 'w-40' }: { name: string; label: string; value: string | undefined; className?: string }) {
  const { set } = useUrlState();
  const commit = (v: string) => v !== (value ?? '') && set({ [name]: v, page: null });
  return (
    <label className="flex flex-col">
      <span className="text-xs text-zinc-500">{label}</span>
      <input
        defaultValue={value ?? ''}
        aria-label={label}
        onKeyDown={(e) => e.key === 'Enter' && commit((e.target as HTMLInputElement).value)}
        onBlur={(e) => commit(e.target.value)}
        className={`${className} rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900`}
      />
    </label>
  );
}
