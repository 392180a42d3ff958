'use client';
import Link from 'next/link';
import { useState } from 'react';
import type { DeadLetterResult } from '@/lib/broker/dead-letter-actions';
import { MAX_DEAD_LETTER_ITEMS } from '@/lib/broker/dead-letter-limit';
import { count, plural, utc } from '@/lib/dashboard/format';
import { DEAD_LETTERS_PAGE_SIZE, deadLetterQuery } from '@/lib/dashboard/dead-letter-filters';
import { messageHref, queueHref } from '@/lib/dashboard/links';
import { deadLetterDialog, deadLetterKey } from '../dead-letter-dialog';
import { useKeptRows } from '../kept-rows';
import { ListTable, pageOf, pageRange, SelectCell, useSelection } from '../list-table';
import { PageButtons } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { ACTION_BUTTON } from '../reason-action';
import { ReasonDialog } from '../reason-dialog';
import { useDenied } from '../session';
import { type MATCHING, UrlTextFilter, useUrlState } from '../url-state';
import {
  type DeadLetter,
  type DeadLetterKind,
  type DeadLetterPage,
  type DeadLetterTarget,
  deadLettersPath,
} from '../client/dead-letters';

type Action = { kind: DeadLetterKind; target: DeadLetterTarget; what: string };

/** A row's two actions, in order. */
const KINDS: [DeadLetterKind, string][] = [
  ['requeue', 'Requeue'],
  ['discard', 'Discard'],
];

const itemsOf = (rows: DeadLetter[]): DeadLetterTarget => ({
  items: rows.map((r) => ({ partitionId: r.partitionId, consumerGroup: r.consumerGroup, offset: r.offset })),
});
const link = 'text-sky-700 hover:underline dark:text-sky-400';

const select = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';

/** A time filter in UTC, landing in the URL as ISO 8601. */
export function UtcTimeFilter({ name, label, value }: { name: string; label: string; value: string | undefined }) {
  const { set } = useUrlState();
  return (
    <label className="flex flex-col">
      <span className="text-xs text-muted">{label}</span>
      <input
        type="datetime-local"
        aria-label={label}
        defaultValue={value ? value.slice(0, 16) : ''}
        className={select}
        onChange={(e) => set({ [name]: e.target.value ? `${e.target.value.slice(0, 16)}:00Z` : null, page: null })}
      />
    </label>
  );
}

/** Dead letters, filtered and paged on the server, with requeue and discard of one or many. */
export function DeadLettersView({
  initial,
  filters,
  filterError,
}: {
  initial: DeadLetterPage;
  filters: Record<string, string | undefined>;
  /** why the server could not read the filtered list (a malformed filter) */
  filterError?: string;
}) {
  const denied = useDenied('admin');
  const { data = initial, error } = useLiveQuery<DeadLetterPage>(
    ['dead-letters', filters],
    deadLettersPath(deadLetterQuery(filters)),
    initial,
  );
  // a malformed filter: its error, and no list (the server's first data is the unfiltered one)
  const failed = error ? (error as Error).message : data === initial ? filterError : undefined;
  const { shown, keep, markOf } = useKeptRows(data.messages, deadLetterKey, JSON.stringify(filters));
  const [action, setAction] = useState<Action | null>(null);
  const [copies, setCopies] = useState<DeadLetterResult[]>([]);
  const page = pageOf(filters.page);
  const total = data.pagination.total;
  const range = pageRange(page, DEAD_LETTERS_PAGE_SIZE, total, data.messages.length);
  const selectable = shown.filter((d) => !markOf(d));
  const { chosen, allChosen, toggle, setAll, clear, isSelected } = useSelection(selectable, deadLetterKey);
  const acted = (kind: DeadLetterKind) => (results: DeadLetterResult[]) => {
    const done = new Set(results.filter((r) => r.success).map(deadLetterKey));
    for (const d of shown) if (done.has(deadLetterKey(d))) keep(d, kind === 'requeue' ? 'requeued' : 'discarded');
    clear(done);
    setCopies(
      kind === 'requeue'
        ? [
            ...new Map(
              results.filter((r) => r.success && r.newTransactionId).map((r) => [r.newTransactionId, r]),
            ).values(),
          ]
        : [],
    );
  };
  const dialog = deadLetterDialog(
    action?.kind ?? 'requeue',
    action?.target ?? { items: [] },
    action?.what ?? '',
    acted(action?.kind ?? 'requeue'),
  );
  const matching = {
    filter: Object.fromEntries(
      Object.entries(deadLetterQuery(filters)).filter(([k, v]) => v && !['limit', 'offset'].includes(k)),
    ) as Record<string, string>,
  };
  const tooMany =
    total > MAX_DEAD_LETTER_ITEMS
      ? `at most ${count(MAX_DEAD_LETTER_ITEMS)} per action: narrow the filters`
      : undefined;
  const text = (name: string, label: string, match: keyof typeof MATCHING, className?: string) => (
    <UrlTextFilter name={name} label={label} match={match} value={filters[name]} className={className} />
  );
  const button = 'rounded border px-2 py-0.5 text-xs disabled:opacity-50';
  const neutral = `${button} border-zinc-300 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800`;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Dead letters</h1>
        <p className="text-sm text-muted">
          Messages a group failed more often than the queue&apos;s retry limit. Requeue pushes one again as a new
          message of its partition for the group that failed only (the other groups count it as done); discard removes
          the dead letter.
        </p>
        <p className="text-sm">
          <Link href="/dead-letters/errors" className={link}>
            Grouped by error
          </Link>
          : how many failed with each error text, requeue or discard a whole group at once.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        {text('queue', 'Queue', 'exact')}
        {text('partition', 'Partition', 'exact')}
        {text('group', 'Group', 'exact')}
        {text('error', 'Error', 'contains', 'w-56 max-w-full')}
        <UtcTimeFilter name="since" label="Failed since (UTC)" value={filters.since} />
        <UtcTimeFilter name="until" label="Failed before (UTC)" value={filters.until} />
        <div className="ml-auto flex flex-wrap items-center gap-2" hidden={Boolean(failed)}>
          <span className="text-muted" data-testid="dead-letter-count">
            {plural(total, 'dead letter')}
          </span>
          <span className="text-muted" data-testid="dead-letter-range">
            {count(range.first)}–{count(range.last)}
          </span>
          <PageButtons page={page} hasNext={range.hasNext} />
        </div>
      </div>
      {failed && (
        <p role="alert" className="text-sm text-red-600" data-testid="filter-error">
          {failed}
        </p>
      )}
      {copies.length > 0 && copies.length <= 5 && (
        <p className="text-sm" data-testid="requeued-copies">
          New:{' '}
          {copies.map((c, i) => (
            <span key={c.newTransactionId}>
              {i > 0 && ', '}
              <Link href={messageHref(c.partitionId, c.newTransactionId!)} className={`font-mono ${link}`}>
                {c.newTransactionId}
              </Link>
            </span>
          ))}
        </p>
      )}
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <span className="text-muted" data-testid="selected-count">
          {count(chosen.length)} selected
        </span>
        <button
          type="button"
          className={neutral}
          disabled={chosen.length === 0 || Boolean(denied)}
          title={denied}
          onClick={() =>
            setAction({ kind: 'requeue', target: itemsOf(chosen), what: plural(chosen.length, 'dead letter') })
          }
        >
          Requeue selected
        </button>
        <button
          type="button"
          className={ACTION_BUTTON}
          disabled={chosen.length === 0 || Boolean(denied)}
          title={denied}
          onClick={() =>
            setAction({ kind: 'discard', target: itemsOf(chosen), what: plural(chosen.length, 'dead letter') })
          }
        >
          Discard selected
        </button>
        <span className="ml-3 text-muted">or</span>
        <button
          type="button"
          className={neutral}
          disabled={total === 0 || Boolean(denied ?? tooMany)}
          title={denied ?? tooMany}
          onClick={() => setAction({ kind: 'requeue', target: matching, what: 'every matching dead letter' })}
        >
          Requeue all {count(total)} matching
        </button>
        <button
          type="button"
          className={ACTION_BUTTON}
          disabled={total === 0 || Boolean(denied ?? tooMany)}
          title={denied ?? tooMany}
          onClick={() => setAction({ kind: 'discard', target: matching, what: 'every matching dead letter' })}
        >
          Discard all {count(total)} matching
        </button>
      </div>
      <div className="overflow-x-auto" hidden={Boolean(failed)}>
        <ListTable
          selectAll={{ label: 'Select every dead letter on this page', checked: allChosen, onChange: setAll }}
          paging={{ range, page, pageSize: DEAD_LETTERS_PAGE_SIZE }}
          empty={
            total === 0 &&
            shown.length === 0 && <p className="py-6 text-center text-sm text-muted">No dead letter matches.</p>
          }
          head={
            <>
              <th className="pr-3">Queue / partition</th>
              <th className="cell-optional pr-3">Group</th>
              <th className="cell-optional pr-3 text-right">Offset</th>
              <th className="pr-3">Message</th>
              <th className="cell-optional pr-3">Payload</th>
              <th className="cell-optional pr-3">Last error</th>
              <th className="cell-optional pr-3 text-right">Attempts</th>
              <th className="cell-optional pr-3">Failed at</th>
              <th className="cell-pinned pr-3">
                <span className="sr-only">Actions</span>
              </th>
            </>
          }
        >
          {shown.map((d) => {
            const payload = JSON.stringify(d.data);
            const where = `offset ${d.offset} of ${d.partition}/${d.consumerGroup} in ${d.queue}`;
            const mark = markOf(d);
            const one = (kind: DeadLetterKind) => () =>
              setAction({
                kind,
                target: itemsOf([d]),
                what: `the dead letter ${d.transactionId} of ${d.partition}/${d.consumerGroup}`,
              });
            return (
              <tr
                key={deadLetterKey(d)}
                className="border-b border-zinc-100 align-top dark:border-zinc-900"
                data-testid={`dead-letter-${d.transactionId}`}
              >
                {mark ? (
                  <td className="py-2 pr-2" />
                ) : (
                  <SelectCell
                    label={`Select dead letter ${where}`}
                    checked={isSelected(d)}
                    onChange={(on) => toggle(d, on)}
                  />
                )}
                <td className="pr-3 break-words">
                  <Link
                    href={queueHref(d.queue, { partition: d.partition, group: d.consumerGroup })}
                    className={`font-mono ${link}`}
                  >
                    {d.queue} / {d.partition}
                  </Link>
                  <div className="font-mono md:hidden">
                    {d.consumerGroup} · {count(d.offset)}
                  </div>
                </td>
                <td className="cell-optional pr-3 font-mono">{d.consumerGroup}</td>
                <td className="cell-optional pr-3 text-right tabular-nums">{count(d.offset)}</td>
                <td className="pr-3">
                  <Link
                    href={messageHref(d.partitionId, d.transactionId)}
                    className={`wrap-anywhere font-mono text-xs ${link}`}
                  >
                    {d.transactionId}
                  </Link>
                  <div className="wrap-anywhere font-mono text-xs text-red-700 md:hidden dark:text-red-300">
                    {d.errorMessage ?? '—'}
                  </div>
                </td>
                <td className="cell-optional max-w-[16rem] pr-3">
                  <details>
                    <summary className="cursor-pointer truncate font-mono text-xs" title="show the whole payload">
                      {payload.length > 60 ? `${payload.slice(0, 60)}…` : payload}
                    </summary>
                    <pre className="mt-1 max-h-64 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900">
                      {JSON.stringify(d.data, null, 2)}
                    </pre>
                  </details>
                </td>
                <td className="cell-optional max-w-[20rem] wrap-anywhere pr-3 font-mono text-xs text-red-700 dark:text-red-300">
                  {d.errorMessage ?? '—'}
                </td>
                <td className="cell-optional pr-3 text-right tabular-nums">{d.retryCount}</td>
                <td className="cell-optional whitespace-nowrap pr-3 text-xs">{utc(d.failedAt)}</td>
                <td className="cell-pinned space-x-1 whitespace-nowrap pr-3">
                  {mark ? (
                    <span className="text-xs font-medium text-emerald-700 dark:text-emerald-400" data-testid="row-mark">
                      {mark}
                    </span>
                  ) : (
                    KINDS.map(([kind, verb]) => (
                      <button
                        key={kind}
                        type="button"
                        className={kind === 'requeue' ? neutral : ACTION_BUTTON}
                        disabled={Boolean(denied)}
                        title={denied}
                        aria-label={`${verb} dead letter ${where}`}
                        onClick={one(kind)}
                      >
                        {verb}
                      </button>
                    ))
                  )}
                </td>
              </tr>
            );
          })}
        </ListTable>
      </div>
      <ReasonDialog
        {...dialog}
        description={action && dialog.description}
        open={action !== null}
        onClose={() => setAction(null)}
      />
    </div>
  );
}
