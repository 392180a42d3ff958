'use client';
import Link from 'next/link';
import { useState } from 'react';
import type { BrowseWindow } from '@/lib/dashboard/browse';
import { utc } from '@/lib/dashboard/format';
import { messageHref, partitionHref, queueHref } from '@/lib/dashboard/links';
import { ListTable } from '../list-table';
import { useLiveQuery } from '../providers';
import { useUrlState } from '../url-state';
import { partitionPagePath } from '../client/queues';

const STATE_STYLE: Record<string, string> = {
  done: 'text-emerald-700 dark:text-emerald-400',
  leased: 'text-sky-700 dark:text-sky-400',
  pending: 'text-zinc-600 dark:text-zinc-300',
  dead_letter: 'font-medium text-red-700 dark:text-red-400',
};

export function PartitionView({ initial }: { initial: BrowseWindow }) {
  const { set } = useUrlState();
  const w0 = initial;
  const qs = new URLSearchParams({
    from: String(w0.from),
    limit: String(w0.limit),
    ...(w0.group ? { group: w0.group } : {}),
  });
  const path = partitionPagePath(w0.queue, w0.partition, qs);
  const { data: w = initial } = useLiveQuery<BrowseWindow>(
    ['partition', w0.queue, w0.partition, w0.from, w0.limit, w0.group],
    path,
    initial,
  );
  const [jump, setJump] = useState('');
  const windowHref = (from: number) =>
    partitionHref(w.queue, w.partition, {
      group: w.group,
      from: String(from),
      limit: w.limit !== 50 ? String(w.limit) : null,
    });
  return (
    <div className="space-y-4">
      <div>
        <p className="text-sm text-muted">
          <Link href="/" className="hover:underline">
            Overview
          </Link>{' '}
          /{' '}
          <Link href={queueHref(w.queue)} className="font-mono hover:underline">
            {w.queue}
          </Link>{' '}
          /
        </p>
        <h1 className="font-mono text-2xl font-semibold wrap-anywhere">{w.partition}</h1>
        <p className="text-sm text-muted">
          head offset {w.head} · cursors:{' '}
          {w.groups.length
            ? w.groups.map((g) => `${g.name} at ${g.committed}`).join(', ')
            : 'no group has read this partition'}
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <label className="flex flex-col">
          <span className="text-xs text-muted">Centre on the cursor of</span>
          <select
            value={w.group ?? ''}
            onChange={(e) => set({ group: e.target.value, from: null })}
            aria-label="Centre on group"
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
          >
            <option value="">the lowest cursor</option>
            {w.groups.map((g) => (
              <option key={g.name} value={g.name}>
                {g.name}
              </option>
            ))}
          </select>
        </label>
        <form
          className="flex items-end gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            if (/^\d+$/.test(jump) && Number(jump) >= 1) set({ from: Number(jump) });
          }}
        >
          <label className="flex flex-col">
            <span className="text-xs text-muted">Jump to offset</span>
            <input
              value={jump}
              onChange={(e) => setJump(e.target.value)}
              inputMode="numeric"
              aria-label="Jump to offset"
              className="w-28 rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
            />
          </label>
          <button type="submit" className="rounded border border-zinc-300 px-2 py-1 dark:border-zinc-700">
            Go
          </button>
        </form>
        <div className="ml-auto flex items-center gap-2">
          <span className="text-muted" data-testid="window">
            offsets {w.from}–{Math.max(w.from, Math.min(w.to, w.head))} of {w.head}
          </span>
          <WindowLink from={w.prevFrom} href={windowHref}>
            Previous
          </WindowLink>
          <WindowLink from={w.nextFrom} href={windowHref}>
            Next
          </WindowLink>
        </div>
      </div>
      <div className="overflow-x-auto">
        <ListTable
          empty={
            w.messages.length === 0 && (
              <p className="py-6 text-center text-sm text-muted">
                No messages at offsets {w.from}–{w.to} (retention may have removed them).
              </p>
            )
          }
          head={
            <>
              <th className="py-2 pr-3 text-right">Offset</th>
              <th className="pr-3">Transaction</th>
              <th className="pr-3">Created</th>
              <th className="pr-3">Payload</th>
              {w.groups.map((g) => (
                <th key={g.name} className="pr-3 font-mono normal-case">
                  {g.name}
                </th>
              ))}
            </>
          }
        >
          {w.messages.map((m) => (
            <tr
              key={m.offset}
              className="border-b border-zinc-100 align-top dark:border-zinc-900"
              data-testid={`offset-${m.offset}`}
            >
              <td className="py-1 pr-3 text-right tabular-nums">{m.offset}</td>
              <td className="pr-3 font-mono text-xs">
                <Link
                  href={messageHref(w.partitionId, m.transactionId)}
                  className="text-sky-700 hover:underline dark:text-sky-400"
                >
                  {m.transactionId}
                </Link>
              </td>
              <td className="pr-3 text-xs text-muted">{utc(m.createdAt)}</td>
              <td className="max-w-xs truncate pr-3 font-mono text-xs" title={m.preview}>
                {m.preview}
              </td>
              {w.groups.map((g) => {
                const state = m.states.find((s) => s.group === g.name)?.state ?? '—';
                return (
                  <td
                    key={g.name}
                    className={`pr-3 text-xs ${STATE_STYLE[state] ?? ''}`}
                    data-testid={`state-${g.name}`}
                  >
                    {state.replace('_', ' ')}
                  </td>
                );
              })}
            </tr>
          ))}
        </ListTable>
      </div>
    </div>
  );
}

/** Previous / next window: a link (it can be opened in a new tab), or a dim label at either end. */
function WindowLink({
  from,
  href,
  children,
}: {
  from: number | null;
  href: (from: number) => string;
  children: React.ReactNode;
}) {
  const style = 'rounded border border-zinc-300 px-2 py-1 dark:border-zinc-700';
  return from === null ? (
    <span className={`${style} opacity-40`} aria-disabled="true">
      {children}
    </span>
  ) : (
    <Link href={href(from)} className={style}>
      {children}
    </Link>
  );
}
