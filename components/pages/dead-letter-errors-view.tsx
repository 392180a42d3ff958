'use client';
import Link from 'next/link';
import { MAX_DEAD_LETTER_ITEMS } from '@/lib/broker/dead-letter-limit';
import type { DeadLetterErrorGroup, DeadLetterErrorList } from '@/lib/dashboard/dead-letter-errors';
import { ERROR_GROUPS_PAGE_SIZE } from '@/lib/dashboard/dead-letter-filters';
import { count, plural, utc } from '@/lib/dashboard/format';
import { withSearch } from '@/lib/dashboard/query-string';
import { deadLetterDialog } from '../dead-letter-dialog';
import { ListTable, pageOf, pageRange } from '../list-table';
import { PageButtons } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { UrlTextFilter } from '../url-state';
import { type DeadLetterKind, deadLetterErrorsPath } from '../client/dead-letters';

const link = 'text-sky-700 hover:underline dark:text-sky-400';

/** Dead letters grouped by error text, with requeue and discard of a whole group. */
export function DeadLetterErrorsView({
  initial,
  filters,
}: {
  initial: DeadLetterErrorList;
  filters: { queue?: string; group?: string; page?: string };
}) {
  const page = pageOf(filters.page);
  const { data = initial, error } = useLiveQuery<DeadLetterErrorList>(
    ['dead-letter-errors', filters],
    deadLetterErrorsPath({
      queue: filters.queue,
      consumerGroup: filters.group,
      page: filters.page,
    }),
    initial,
  );
  const range = pageRange(page, ERROR_GROUPS_PAGE_SIZE, data.total, data.groups.length);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Dead letters by error</h1>
        <p className="text-sm text-muted">
          {plural(data.deadLetters, 'dead letter')} under {plural(data.total, 'distinct error')}, the most frequent
          first. Requeue or discard every dead letter of one error at once (up to {count(MAX_DEAD_LETTER_ITEMS)}; narrow
          by queue or group beyond that), with a reason, audited.{' '}
          <Link href="/dead-letters" className={link}>
            One by one
          </Link>
          .
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <UrlTextFilter name="queue" label="Queue" match="exact" value={filters.queue} />
        <UrlTextFilter name="group" label="Group" match="exact" value={filters.group} />
        <span className="ml-auto flex items-center gap-2">
          <PageButtons page={page} hasNext={range.hasNext} />
        </span>
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      <div className="overflow-x-auto">
        <ListTable
          paging={{ range, page, pageSize: ERROR_GROUPS_PAGE_SIZE }}
          empty={
            data.total === 0 && (
              <p className="py-6 text-center text-sm text-muted">
                No dead letters{filters.queue || filters.group ? ' match' : ''}.
              </p>
            )
          }
          head={
            <>
              <th className="py-2 pr-3">Error</th>
              <th className="pr-3 text-right">Dead letters</th>
              <th className="cell-optional pr-3">Where</th>
              <th className="cell-optional pr-3">First failed (UTC)</th>
              <th className="pr-3">Last failed (UTC)</th>
              <th className="pr-3">Actions</th>
            </>
          }
        >
          {data.groups.map((g) => (
            <ErrorRow key={g.error} group={g} filters={filters} />
          ))}
        </ListTable>
      </div>
    </div>
  );
}

function ErrorRow({ group: g, filters }: { group: DeadLetterErrorGroup; filters: { queue?: string; group?: string } }) {
  const label = g.error === '' ? '(no error text)' : g.error;
  const filter: Record<string, string> = { errorIs: g.error };
  if (filters.queue) filter.queue = filters.queue;
  if (filters.group) filter.consumerGroup = filters.group;
  const tooMany =
    g.deadLetters > MAX_DEAD_LETTER_ITEMS
      ? `More than ${count(MAX_DEAD_LETTER_ITEMS)} dead letters: filter by queue or group first`
      : undefined;
  const short = label.length > 60 ? `${label.slice(0, 60)}…` : label;
  const what = `the ${plural(g.deadLetters, 'dead letter')} failed with “${short}”`;
  const action = (kind: DeadLetterKind) => (
    <ReasonAction
      label={kind === 'requeue' ? 'Requeue all' : 'Discard all'}
      accessibleName={`${kind === 'requeue' ? 'Requeue' : 'Discard'} ${what}`}
      disabledReason={tooMany}
      {...deadLetterDialog(kind, { filter }, what)}
    />
  );
  const list = withSearch('/dead-letters', { queue: filters.queue, group: filters.group, error: g.error || undefined });
  return (
    <tr className="border-b border-zinc-100 align-top dark:border-zinc-900" data-testid="error-group">
      <td className="max-w-md py-2 pr-3">
        <span className="block whitespace-pre-wrap break-words font-mono text-xs" data-testid="error-text">
          {label}
        </span>
        <Link href={list} className={`${link} text-xs`}>
          list them
        </Link>
      </td>
      <td className="pr-3 text-right tabular-nums" data-testid="error-count">
        {count(g.deadLetters)}
      </td>
      <td className="cell-optional pr-3 text-xs">
        {g.queues.join(', ')}
        {g.queueCount > g.queues.length && ` and ${count(g.queueCount - g.queues.length)} more`}
        <span className="block text-muted">
          {plural(g.consumerGroupCount, 'group')}: {g.consumerGroups.join(', ')}
          {g.consumerGroupCount > g.consumerGroups.length && '…'}
        </span>
      </td>
      <td className="cell-optional pr-3">{utc(g.firstFailedAt)}</td>
      <td className="pr-3">{utc(g.lastFailedAt)}</td>
      <td className="pr-3">
        <span className="flex flex-wrap gap-1">
          {action('requeue')}
          {action('discard')}
        </span>
      </td>
    </tr>
  );
}
