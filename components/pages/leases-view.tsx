'use client';
import Link from 'next/link';
import { memo, useState } from 'react';
import type { Lease, LeaseList } from '@/lib/broker/leases';
import { count, duration, utc } from '@/lib/dashboard/format';
import { LEASES_PAGE_SIZE } from '@/lib/dashboard/lease-filters';
import { auditHref, messageAtHref, queueHref } from '@/lib/dashboard/links';
import { BulkRelease } from '../bulk-release';
import { Countdown } from '../countdown';
import { forceReleaseDialog } from '../lease-release-preview';
import { NameText } from '../name-text';
import { ListTable, pageOf, pageRange, SelectCell, useSelection } from '../list-table';
import { PageButtons } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { ACTION_BUTTON } from '../reason-action';
import { ReasonDialog } from '../reason-dialog';
import { useKeptRows } from '../kept-rows';
import { setAsideDialog, type SetAsideKind } from '../set-aside-dialog';
import { useDenied } from '../session';
import { type MATCHING, UrlTextFilter, useUrlState } from '../url-state';
import { leasesPath } from '../client/leases';

const STATES: [string, string][] = [
  ['', 'every lease'],
  ['live', 'live'],
  ['expiring', 'expiring soon (< 10 s)'],
  ['expired', 'expired, not yet reclaimed'],
  ['held-long', 'held over twice its lease time (extended)'],
  ['redelivered', 'redelivered more than N times'],
  ['stuck', 'stuck (past its current expiry, or redelivered)'],
];

const SORTS: [string, string][] = [
  ['', 'expiring first'],
  ['held', 'held longest first'],
  ['deliveries', 'most delivered first'],
];

const leaseKey = (l: Lease) => `${l.leaseId}/${l.partitionId}/${l.consumerGroup}`;

const select = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';

/**
 * Leases, filtered, sorted and paged on the server. Rows re-render only when the page's data
 * changes (their countdowns tick by themselves), and the page has one confirmation dialog.
 */
export function LeasesView({
  initial,
  filters,
  filterError,
}: {
  initial: LeaseList;
  filters: Record<string, string | undefined>;
  /** why the server could not read the filtered list (a malformed filter) */
  filterError?: string;
}) {
  const { set } = useUrlState();
  const denied = useDenied('admin');
  const { data = initial, error } = useLiveQuery<LeaseList>(
    ['leases', filters],
    leasesPath({ ...filters, pageSize: String(LEASES_PAGE_SIZE) }),
    initial,
  );
  // a malformed filter: its error, and no list (the server's first data is the unfiltered one)
  const failed = error ? (error as Error).message : data === initial ? filterError : undefined;
  const [releasing, setReleasing] = useState<Lease | null>(null);
  const release = forceReleaseDialog(releasing?.leaseId ?? '');
  const [settingAside, setSettingAside] = useState<{ lease: Lease; kind: SetAsideKind } | null>(null);
  const aside =
    settingAside &&
    setAsideDialog(settingAside.kind, {
      partitionId: settingAside.lease.partitionId,
      partition: settingAside.lease.partition,
      queue: settingAside.lease.queue,
      group: settingAside.lease.consumerGroup,
      offset: settingAside.lease.span.from,
      leaseId: settingAside.lease.leaseId,
      holder: settingAside.lease.holder,
    });
  const holder = filters.holderIs ?? filters.holder;
  const { shown, keep, markOf } = useKeptRows(data.leases, leaseKey, JSON.stringify(filters));
  const selectable = shown.filter((l) => !markOf(l));
  const { selected, allChosen, toggle, setAll, clear, isSelected } = useSelection(
    selectable,
    leaseKey,
    JSON.stringify(filters),
  );
  const markReleased = (ids: string[]) => {
    const gone = new Set(ids);
    for (const l of shown) if (gone.has(l.leaseId)) keep(l, 'released');
    clear();
  };
  const page = pageOf(filters.page);
  const range = pageRange(page, LEASES_PAGE_SIZE, data.total, data.leases.length);
  const text = (name: string, label: string, match: keyof typeof MATCHING, className?: string) => (
    <UrlTextFilter name={name} label={label} match={match} value={filters[name]} className={className} />
  );
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Leases</h1>
        <p className="text-sm text-muted">
          Who holds what. A lease that expired without an ack redelivers on the next pop; a force release ends one now
          and fences its holder.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        {text('lease', 'Lease id', 'id', 'w-80 font-mono')}
        {text('queue', 'Queue', 'exact')}
        {text('group', 'Group', 'exact')}
        {filters.holderIs ? text('holderIs', 'Holder', 'exact') : text('holder', 'Holder', 'contains')}
        <label className="flex flex-col">
          <span className="text-xs text-muted">State</span>
          <select
            value={filters.state ?? ''}
            onChange={(e) => set({ state: e.target.value, page: null })}
            className={select}
            aria-label="State"
          >
            {STATES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        {(filters.state === 'redelivered' || filters.state === 'stuck') &&
          text('minDeliveries', 'Deliveries', 'threshold', 'w-24')}
        <label className="flex flex-col">
          <span className="text-xs text-muted">Sort</span>
          <select
            value={filters.sort ?? ''}
            onChange={(e) => set({ sort: e.target.value, page: null })}
            className={select}
            aria-label="Sort"
          >
            {SORTS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <div className="flex items-center gap-2">
          <BulkRelease
            label={`Release selected (${count(new Set([...selected.values()].map((l) => l.leaseId)).size)})`}
            target={{ leases: [...selected.values()] }}
            onDone={markReleased}
          />
          {holder && data.total > 0 && (
            <BulkRelease
              label={`Release all ${count(data.total)} of this holder`}
              accessibleName={`Release every lease of holder ${holder}`}
              target={{ filter: filters.holderIs ? { holderIs: filters.holderIs } : { holder: filters.holder! } }}
              onDone={markReleased}
            />
          )}
        </div>
        <div className="ml-auto flex items-center gap-2" hidden={Boolean(failed)}>
          <span className="text-muted" data-testid="lease-count">
            {count(data.total)} leases
          </span>
          <span className="text-muted" data-testid="lease-range">
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
      <div className="overflow-x-auto" hidden={Boolean(failed)}>
        <ListTable
          selectAll={{
            label: 'Select every lease shown',
            checked: allChosen,
            disabled: selectable.length === 0,
            onChange: setAll,
          }}
          paging={{ range, page, pageSize: LEASES_PAGE_SIZE }}
          empty={
            data.total === 0 &&
            (filters.lease ? (
              <p className="py-6 text-center text-sm text-muted" data-testid="lease-gone">
                Lease <span className="font-mono wrap-anywhere">{filters.lease}</span> no longer exists
                {Object.keys(filters).some((k) => k !== 'lease' && filters[k])
                  ? ' or does not match the other filters'
                  : ''}
                : it was acked, released, or reclaimed after it expired.{' '}
                <Link href={auditHref({ target: filters.lease })} className="text-sky-700 underline dark:text-sky-400">
                  What the audit log says about it
                </Link>
              </p>
            ) : (
              shown.length === 0 && <p className="py-6 text-center text-sm text-muted">No lease matches.</p>
            ))
          }
          head={
            <>
              <th className="cell-optional py-2 pr-3">Lease</th>
              <th className="pr-3">Queue / partition</th>
              <th className="cell-optional pr-3">Group</th>
              <th className="cell-optional pr-3">Span</th>
              <th className="pr-3">Holder</th>
              <th className="cell-optional pr-3">Held</th>
              <th className="pr-3">Expiry</th>
              <th className="cell-optional pr-3 text-right" title="deliveries of the first offset">
                1st offset deliveries
              </th>
              <th className="cell-pinned pr-3">
                <span className="sr-only">Actions</span>
              </th>
            </>
          }
        >
          {shown.map((l) => (
            <LeaseRow
              key={leaseKey(l)}
              lease={l}
              onRelease={setReleasing}
              onSetAside={(lease, kind) => setSettingAside({ lease, kind })}
              denied={denied}
              mark={markOf(l)}
              selected={isSelected(l)}
              onSelect={toggle}
            />
          ))}
        </ListTable>
      </div>
      <p className="text-xs text-muted">Server time {utc(data.now)}</p>
      <ReasonDialog
        {...release}
        description={releasing && release.description}
        open={releasing !== null}
        onClose={() => setReleasing(null)}
        onDone={() => {
          // the whole lease is released: every row of it keeps its place, marked
          for (const l of shown) if (l.leaseId === releasing?.leaseId) keep(l, 'released');
        }}
      />
      {aside && (
        <ReasonDialog
          {...aside}
          open={settingAside !== null}
          onClose={() => setSettingAside(null)}
          onDone={() => {
            for (const l of shown)
              if (l.leaseId === settingAside?.lease.leaseId)
                keep(l, settingAside.kind === 'dead-letter' ? 'dead-lettered, lease ended' : 'skipped, lease ended');
          }}
        />
      )}
    </div>
  );
}

const LeaseRow = memo(function LeaseRow({
  lease: l,
  onRelease,
  onSetAside,
  denied,
  mark,
  selected,
  onSelect,
}: {
  lease: Lease;
  onRelease: (l: Lease) => void;
  onSetAside: (l: Lease, kind: SetAsideKind) => void;
  denied: string | undefined;
  mark: string | undefined;
  selected: boolean;
  onSelect: (l: Lease, on: boolean) => void;
}) {
  const heldLong = l.state === 'live' && l.heldSeconds > 2 * l.leaseSeconds;
  const where = `${l.partition}/${l.consumerGroup}`;
  return (
    <tr
      className={`border-b border-zinc-100 align-top dark:border-zinc-900 ${l.state === 'expired' ? 'bg-red-50 dark:bg-red-950/40' : ''}`}
      data-testid={`lease-${l.leaseId}`}
    >
      <SelectCell
        label={`Select lease ${l.leaseId} on ${where}`}
        checked={selected}
        disabled={Boolean(mark)}
        onChange={(on) => onSelect(l, on)}
      />
      <td className="cell-optional py-2 pr-3 font-mono text-xs whitespace-nowrap">{l.leaseId}</td>
      <td className="py-2 pr-3 break-words md:py-0">
        <Link
          href={queueHref(l.queue, { partition: l.partition, group: l.consumerGroup })}
          className="font-mono text-sky-700 hover:underline dark:text-sky-400"
        >
          <NameText text={l.queue} /> / <NameText text={l.partition} />
        </Link>
        <div className="font-mono md:hidden">{l.consumerGroup}</div>
      </td>
      <td className="cell-optional pr-3 font-mono">{l.consumerGroup}</td>
      <td className="cell-optional pr-3 tabular-nums">
        <Link
          href={messageAtHref(l.partitionId, l.span.from)}
          className="text-sky-700 hover:underline dark:text-sky-400"
          aria-label={`First message of span ${l.span.from}–${l.span.to} on ${l.partition}/${l.consumerGroup}`}
        >
          {l.span.from}
        </Link>
        –{l.span.to}{' '}
        <span className="text-muted">
          ({l.span.size}, {l.acked} acked)
        </span>
      </td>
      <td className="pr-3 font-mono text-xs wrap-anywhere" data-testid="lease-holder">
        {l.holder ?? '—'}
        {l.subject && (
          <div className="text-muted" title="the subject of the token that took the lease">
            token: {l.subject}
          </div>
        )}
      </td>
      <td
        className={`cell-optional pr-3 tabular-nums ${heldLong ? 'font-medium text-red-700 dark:text-red-300' : ''}`}
        title={`acquired ${utc(l.acquiredAt)}; leased for ${l.leaseSeconds} s`}
      >
        {duration(l.heldSeconds)}
        {l.extensions ? ` (+${l.extensions} ext.)` : ''}
        <div className="text-xs text-muted">
          {l.state === 'expired' ? 'until it expired' : `of ${duration(l.leaseSeconds)}`}
        </div>
      </td>
      <td className="pr-3">
        <Countdown expiresAt={l.expiresAt} />
      </td>
      <td
        className={`cell-optional pr-3 text-right tabular-nums ${l.firstOffsetDeliveries > 3 ? 'font-medium text-red-700 dark:text-red-300' : ''}`}
      >
        {l.firstOffsetDeliveries}
      </td>
      <td className="cell-pinned pr-3">
        {mark ? (
          <span className="text-xs font-medium text-emerald-700 dark:text-emerald-400" data-testid="row-mark">
            {mark}
          </span>
        ) : (
          <div className="flex flex-col items-start gap-0.5">
            <button
              type="button"
              onClick={() => onRelease(l)}
              aria-label={`Force release lease ${l.leaseId} on ${where}`}
              disabled={Boolean(denied)}
              title={denied}
              className={ACTION_BUTTON}
            >
              Force release
            </button>
            <span className="inline-flex gap-1">
              <button
                type="button"
                onClick={() => onSetAside(l, 'dead-letter')}
                aria-label={`Move offset ${l.span.from} of ${where} to the dead letters`}
                disabled={Boolean(denied)}
                title={denied ?? `Move offset ${l.span.from}, the first message not done, to the dead letters`}
                className={ACTION_BUTTON}
              >
                Dead-letter {l.span.from}
              </button>
              <button
                type="button"
                onClick={() => onSetAside(l, 'skip')}
                aria-label={`Skip offset ${l.span.from} of ${where}`}
                disabled={Boolean(denied)}
                title={denied ?? `Skip offset ${l.span.from}, the first message not done`}
                className={ACTION_BUTTON}
              >
                Skip
              </button>
            </span>
          </div>
        )}
        <div>
          <Link
            href={auditHref({ target: l.leaseId })}
            aria-label={`Audit of lease ${l.leaseId} on ${l.partition}/${l.consumerGroup}`}
            className="text-xs text-sky-700 hover:underline dark:text-sky-400"
          >
            audit
          </Link>
        </div>
      </td>
    </tr>
  );
});
