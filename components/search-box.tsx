'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { SearchMatch } from '@/lib/dashboard/find-by-id';
import { search } from './client/search';

/** Paste a lease id, message id, transaction id, holder, group, partition or queue name: one match opens it, several are listed. */
export function SearchBox({
  initial = '',
  label = 'Find by lease id, message id, transaction id, holder, group, partition or queue name',
}: {
  /** the text it starts with (a not-found page offers the name it did not find) */
  initial?: string;
  /** its accessible name (a second box on a page needs its own) */
  label?: string;
} = {}) {
  const router = useRouter();
  const [q, setQ] = useState(initial);
  const [result, setResult] = useState<{ q: string; matches: SearchMatch[]; error?: string } | null>(null);
  async function find() {
    const text = q.trim();
    if (!text) return;
    try {
      const found = await search(text);
      if (found.matches.length === 1) {
        setResult(null);
        router.push(found.matches[0].href);
      } else setResult(found);
    } catch (err) {
      setResult({ q: text, matches: [], error: (err as Error).message });
    }
  }
  return (
    <form
      role="search"
      className="relative max-w-full"
      onSubmit={(e) => {
        e.preventDefault();
        void find();
      }}
    >
      <input
        value={q}
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && setResult(null)}
        placeholder="Find id, holder, group, partition, queue…"
        aria-label={label}
        className="w-72 max-w-full rounded border border-zinc-300 bg-white px-2 py-0.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
      />
      {result && (
        <div
          className="absolute left-0 z-20 mt-1 w-[28rem] max-w-[90vw] rounded border border-zinc-300 bg-white p-2 text-sm shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
          data-testid="search-results"
        >
          {result.error ? (
            <p className="text-red-600">{result.error}</p>
          ) : result.matches.length === 0 ? (
            <p>
              No lease, message or transaction with id <span className="font-mono">{result.q}</span>, and no holder,
              group, partition or queue named so.
            </p>
          ) : (
            <ul className="space-y-1">
              {result.matches.map((m) => (
                <li key={`${m.kind}:${m.href}`}>
                  <Link
                    href={m.href}
                    onClick={() => setResult(null)}
                    className="text-sky-700 hover:underline dark:text-sky-400"
                  >
                    {m.label}
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
