'use client';
import Link from 'next/link';
import type { Consumer, ConsumerList } from '@/lib/dashboard/consumers';
import { count, duration, relative, utc } from '@/lib/dashboard/format';
import { leasesHref } from '@/lib/dashboard/links';
import { SILENT_AFTER_SECONDS } from '@/lib/dashboard/signals';
import { BulkRelease } from '../bulk-release';
import { ListTable, pageOf, pageRange } from '../list-table';
import { PageButtons } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { consumersPath } from '../client/consumer-groups';

const PAGE_SIZE = 100;

export function ConsumersView({ initial, page: asked }: { initial: ConsumerList; page?: string }) {
  const page = pageOf(asked);
  const { data = initial, error } = useLiveQuery<ConsumerList>(
    ['consumers', page],
    consumersPath(page, PAGE_SIZE),
    initial,
  );
  const range = pageRange(page, PAGE_SIZE, data.total, data.consumers.length);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Consumers</h1>
        <p className="text-sm text-muted">
          Every lease holder (its <span className="font-mono">X-Queen-Consumer</span> header, else its address and user
          agent): what it holds now, and what it did since {utc(data.since)} (the last 60 minutes), most recently seen
          first. Expired: leases of its that ran out and were reclaimed or released; released: leases of its an operator
          ended. <strong>Silent</strong>: a lease of its is past its current expiry, or it has not claimed, acked or
          extended one for {duration(SILENT_AFTER_SECONDS)} while another holder of the same group claimed within a
          quarter of that time. A holder that extends its lease is at work, however long it holds it.
        </p>
      </div>
      <div className="flex items-center justify-end gap-2 text-sm">
        <span className="text-muted" data-testid="row-range">
          holders {count(range.first)}–{count(range.last)} of {count(data.total)}
        </span>
        <PageButtons page={page} hasNext={range.hasNext} />
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      <div className="overflow-x-auto">
        <ListTable
          paging={{ range, page, pageSize: PAGE_SIZE }}
          empty={
            data.total === 0 && (
              <p className="py-6 text-center text-sm text-muted">No lease holders now or in the last hour.</p>
            )
          }
          head={
            <>
              <th className="py-2 pr-3">Holder</th>
              <th
                className="pr-3 text-right"
                title="(partition, group) pairs it holds a lease on now: the rows its link lists"
              >
                Leased partitions
              </th>
              <th className="cell-optional pr-3 text-right" title="A pop over several partitions holds one lease id">
                Lease ids
              </th>
              <th
                className="cell-optional pr-3 text-right"
                title="Messages in the spans of the leases it holds, from each committed offset"
              >
                Messages in span
              </th>
              <th className="pr-3 text-right" title="Leased partitions whose lease expired and nobody reclaimed yet">
                Expired, not reclaimed
              </th>
              <th className="pr-3 text-right">Acked 1 h</th>
              <th className="pr-3 text-right">Failed 1 h</th>
              <th className="cell-optional pr-3 text-right">Leases expired 1 h</th>
              <th className="cell-optional pr-3 text-right">Released 1 h</th>
              <th className="cell-pinned pr-3">
                <span className="sr-only">Actions</span>
              </th>
            </>
          }
        >
          {data.consumers.map((c) => (
            <ConsumerLine key={c.holder} consumer={c} now={Date.parse(data.now)} />
          ))}
        </ListTable>
      </div>
    </div>
  );
}

function ConsumerLine({ consumer: c, now }: { consumer: Consumer; now: number }) {
  const leases = (state?: string) => leasesHref({ holder: c.holder, state });
  return (
    <tr className="border-b border-zinc-100 align-top dark:border-zinc-900" data-testid={`consumer-row-${c.holder}`}>
      <td className="max-w-xs py-2 pr-3 font-mono text-xs wrap-anywhere">
        {c.holder}
        {c.silent && (
          <span
            className="ml-1 rounded bg-red-100 px-1 font-sans font-medium text-red-800 dark:bg-red-950 dark:text-red-200"
            data-testid="silent"
          >
            silent
            <span className="font-normal" data-testid="silent-why">
              {c.silentWhy === 'expired'
                ? ': a lease expired'
                : `: quiet ${duration(c.quietSeconds)} while its group's other holders work`}
            </span>
          </span>
        )}
        {c.client && (
          <div className="font-sans text-muted" data-testid="client">
            {c.client.address ?? 'address unknown'} · {c.client.userAgent ?? 'no user agent'} ·{' '}
            <span data-testid="pops">{count(c.client.pops)}</span> pops in 5 min ({count(c.client.emptyPops)} empty)
          </div>
        )}
        <div className="font-sans text-muted" data-testid="last-seen" title={utc(c.lastSeenAt)}>
          last seen {relative(c.lastSeenAt, now)}
        </div>
      </td>
      <td className="pr-3 text-right tabular-nums" data-testid="partitions">
        {c.partitions ? (
          <Link
            href={leases()}
            className="text-sky-700 hover:underline dark:text-sky-400"
            aria-label={`${c.partitions} leased partitions of ${c.holder}`}
          >
            {count(c.partitions)}
          </Link>
        ) : (
          0
        )}
      </td>
      <td className="cell-optional pr-3 text-right tabular-nums" data-testid="lease-ids">
        {count(c.leases)}
      </td>
      <td className="cell-optional pr-3 text-right tabular-nums" data-testid="messages">
        {count(c.messages)}
      </td>
      <td className="pr-3 text-right tabular-nums" data-testid="expired-now">
        {c.expiredNow ? (
          <Link
            href={leases('expired')}
            className="font-semibold text-red-700 hover:underline dark:text-red-400"
            aria-label={`${c.expiredNow} expired, not reclaimed, leased partitions of ${c.holder}`}
          >
            {count(c.expiredNow)}
          </Link>
        ) : (
          0
        )}
      </td>
      <td className="pr-3 text-right tabular-nums" data-testid="acked">
        {count(c.acked)}
      </td>
      <td
        className={`pr-3 text-right tabular-nums ${c.failed ? 'text-amber-700 dark:text-amber-400' : ''}`}
        data-testid="failed"
      >
        {count(c.failed)}
      </td>
      <td
        className={`cell-optional pr-3 text-right tabular-nums ${c.expired ? 'text-red-700 dark:text-red-400' : ''}`}
        data-testid="expired"
      >
        {count(c.expired)}
      </td>
      <td className="cell-optional pr-3 text-right tabular-nums" data-testid="released">
        {count(c.released)}
      </td>
      <td className="cell-pinned pr-3">
        {c.partitions > 0 && (
          <BulkRelease
            label="Release all"
            accessibleName={`Release every lease of ${c.holder}`}
            target={{ filter: { holderIs: c.holder } }}
          />
        )}
      </td>
    </tr>
  );
}
