'use client';
import Link from 'next/link';
import { utc } from '@/lib/dashboard/format';
import { messageHref, queueHref } from '@/lib/dashboard/links';
import { MESSAGE_BROWSER_PAGE_SIZE, MESSAGE_STATUSES, messageBrowserQuery } from '@/lib/dashboard/message-browser';
import { ListTable, pageOf } from '../list-table';
import { PageButtons } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { UrlTextFilter, useUrlState } from '../url-state';
import { UtcTimeFilter } from './dead-letters-view';
import { type MessageList, messagesPath } from '../client/messages';

const link = 'text-sky-700 hover:underline dark:text-sky-400';
const STATUS_LABEL: Record<string, string> = {
  pending: 'pending',
  processing: 'leased',
  completed: 'done',
  dead_letter: 'dead letter',
};

/** Messages of a time window (the last hour by default), by payload text, status for a group, queue and partition. */
export function MessageBrowserView({
  initial,
  filters,
  error: firstError,
}: {
  initial: MessageList | null;
  filters: Record<string, string | undefined>;
  error: string | null;
}) {
  const { set } = useUrlState();
  const page = pageOf(filters.page);
  const { data, error } = useLiveQuery<MessageList>(
    ['message-browser', filters],
    messagesPath(messageBrowserQuery(filters)),
    initial ?? undefined,
  );
  const problem = error ? (error as Error).message : firstError;
  const rows = problem ? [] : (data?.messages ?? []);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Messages</h1>
        <p className="text-sm text-muted">
          Messages pushed between {data ? utc(data.pagination.from) : '…'} and {data ? utc(data.pagination.to) : '…'}{' '}
          (the last hour unless a time range is set), newest first, with their status
          {filters.group ? (
            <>
              {' '}
              for group <span className="font-mono">{filters.group}</span>
            </>
          ) : (
            ' for queue mode (else: done once every group has passed it)'
          )}
          . Payload text matches a part of the payload&apos;s JSON, any case; encrypted payloads are not searched.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <UrlTextFilter name="q" label="Payload text" match="contains" value={filters.q} className="w-56 max-w-full" />
        <UrlTextFilter name="queue" label="Queue" match="exact" value={filters.queue} />
        <UrlTextFilter name="partition" label="Partition" match="exact" value={filters.partition} />
        <UrlTextFilter name="group" label="Group" match="exact" value={filters.group} />
        <label className="flex flex-col">
          <span className="text-xs text-muted">Status</span>
          <select
            aria-label="Status"
            value={filters.status ?? ''}
            onChange={(e) => set({ status: e.target.value, page: null })}
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
          >
            <option value="">any</option>
            {MESSAGE_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABEL[s]}
              </option>
            ))}
          </select>
        </label>
        <UtcTimeFilter name="from" label="Pushed from (UTC)" value={filters.from} />
        <UtcTimeFilter name="to" label="Pushed until (UTC)" value={filters.to} />
        <span className="ml-auto flex items-center gap-2">
          <span className="text-muted" data-testid="message-range">
            {rows.length === 0
              ? 'no messages'
              : `messages ${(page - 1) * MESSAGE_BROWSER_PAGE_SIZE + 1}–${(page - 1) * MESSAGE_BROWSER_PAGE_SIZE + rows.length}`}
          </span>
          <PageButtons page={page} hasNext={rows.length === MESSAGE_BROWSER_PAGE_SIZE} />
        </span>
      </div>
      {problem && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          {problem}
        </p>
      )}
      {!problem && (
        <div className="overflow-x-auto">
          <ListTable
            head={
              <>
                <th className="py-2 pr-3">Transaction id</th>
                <th className="pr-3">Queue / partition</th>
                <th className="pr-3">Status</th>
                <th className="cell-optional pr-3">Pushed (UTC)</th>
              </>
            }
          >
            {rows.map((m) => (
              <tr key={m.id} className="border-b border-zinc-100 dark:border-zinc-900" data-testid="browsed-message">
                <td className="py-1.5 pr-3 wrap-anywhere font-mono text-xs">
                  <Link href={messageHref(m.partitionId, m.transactionId)} className={link}>
                    {m.transactionId}
                  </Link>
                </td>
                <td className="pr-3 font-mono text-xs wrap-anywhere">
                  <Link href={queueHref(m.queue)} className={link}>
                    {m.queue}
                  </Link>
                  /{m.partition}
                </td>
                <td className="pr-3" data-testid="message-status">
                  {STATUS_LABEL[m.status] ?? m.status}
                </td>
                <td className="cell-optional pr-3">{utc(m.createdAt)}</td>
              </tr>
            ))}
          </ListTable>
        </div>
      )}
    </div>
  );
}
