'use client';
import Link from 'next/link';
import { memo, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { Lease, LeaseList } from '@/lib/broker/leases';
import { count, duration, shortId, utc } from '@/lib/dashboard/format';
import { LEASES_PAGE_SIZE } from '@/lib/dashboard/lease-filters';
import { messageAtHref } from '@/lib/dashboard/links';
import { withSearch } from '@/lib/dashboard/search';
import { api } from '../api';
import { Countdown } from '../countdown';
import { useLiveQuery } from '../providers';
import { ReasonDialog } from '../reason-dialog';
import { useDenied } from '../session';
import { UrlTextFilter, useUrlState } from '../url-state';

const STATES: [string, string][] = [
  ['', 'every lease'],
  ['live', 'live'],
  ['expiring', 'expiring soon (< 10 s)'],
  ['expired', 'expired, not yet reclaimed'],
  ['held-long', 'held over twice its lease time'],
  ['redelivered', 'redelivered more than N times'],
  ['stuck', 'stuck (held long or redelivered)'],
];

const SORTS: [string, string][] = [
  ['', 'expiring first'],
  ['held', 'held longest first'],
  ['deliveries', 'most delivered first'],
];

const select = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';

/**
 * Leases, filtered, sorted and paged on the server. Rows re-render only when the page's data
 * changes (their countdowns tick by themselves), and the page has one confirmation dialog.
 */
export function LeasesView({ initial, filters }: { initial: LeaseList; filters: Record<string, string | undefined> }) {
  const { set } = useUrlState();
  const client = useQueryClient();
  const denied = useDenied('admin');
  const { data = initial, error } = useLiveQuery<LeaseList>(['leases', filters], withSearch('/api/v1/leases', { ...filters, pageSize: String(LEASES_PAGE_SIZE) }), initial);
  const [releasing, setReleasing] = useState<Lease | null>(null);
  const [busy, setBusy] = useState(false);
  const [releaseError, setReleaseError] = useState<string | null>(null);
  const page = Math.max(1, Number(filters.page ?? 1) || 1);
  const first = data.total === 0 ? 0 : (page - 1) * LEASES_PAGE_SIZE + 1;
  const last = Math.min(page * LEASES_PAGE_SIZE, data.total);
  const text = (name: string, label: string, className?: string) => <UrlTextFilter name={name} label={label} value={filters[name]} className={className} />;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Leases</h1>
        <p className="text-sm text-zinc-500">Who holds what. A lease that expired without an ack redelivers on the next pop; a force release ends one now and fences its holder.</p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        {text('queue', 'Queue')}
        {text('group', 'Group')}
        {text('holder', 'Holder contains')}
        <label className="flex flex-col">
          <span className="text-xs text-zinc-500">State</span>
          <select value={filters.state ?? ''} onChange={(e) => set({ state: e.target.value, page: null })} className={select} aria-label="State">
            {STATES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        </label>
        {(filters.state === 'redelivered' || filters.state === 'stuck') && text('minDeliveries', 'N (deliveries)', 'w-24')}
        <label className="flex flex-col">
          <span className="text-xs text-zinc-500">Sort</span>
          <select value={filters.sort ?? ''} onChange={(e) => set({ sort: e.target.value, page: null })} className={select} aria-label="Sort">
            {SORTS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        </label>
        <div className="ml-auto flex items-center gap-2">
          <span className="text-zinc-500" data-testid="lease-count">{count(data.total)} leases</span>
          <span className="text-zinc-500" data-testid="lease-range">{count(first)}–{count(last)}</span>
          <button type="button" disabled={page <= 1} onClick={() => set({ page: page - 1 > 1 ? page - 1 : null })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Previous</button>
          <button type="button" disabled={last >= data.total} onClick={() => set({ page: page + 1 })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Next</button>
        </div>
      </div>
      {error && <p role="alert" className="text-sm text-red-600">{(error as Error).message}</p>}
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-zinc-500 dark:border-zinc-800">
            <tr>
              <th className="py-2 pr-3">Lease</th>
              <th className="pr-3">Queue / partition</th>
              <th className="pr-3">Group</th>
              <th className="pr-3">Span</th>
              <th className="pr-3">Holder</th>
              <th className="pr-3">Held</th>
              <th className="pr-3">Expiry</th>
              <th className="pr-3 text-right" title="deliveries of the first offset">1st offset deliveries</th>
              <th className="pr-3" />
            </tr>
          </thead>
          <tbody>
            {data.leases.map((l) => (
              <LeaseRow key={`${l.leaseId}/${l.partitionId}/${l.consumerGroup}`} lease={l} onRelease={setReleasing} denied={denied} />
            ))}
          </tbody>
        </table>
        {data.leases.length === 0 && <p className="py-6 text-center text-sm text-zinc-500">No lease matches.</p>}
      </div>
      <p className="text-xs text-zinc-500">Server time {utc(data.now)}</p>
      <ReasonDialog
        open={releasing !== null}
        title="Force release this lease?"
        description={releasing && (
          <>Span {releasing.span.from}–{releasing.span.to} of {releasing.queue}/{releasing.partition} for <strong>{releasing.consumerGroup}</strong> becomes claimable at once (with every other partition this lease id holds). The holder <strong>{releasing.holder ?? 'unknown'}</strong> may still be working on it: its acks will be refused, so the batch will be processed again.</>
        )}
        confirmLabel="Release"
        busy={busy}
        error={releaseError}
        onCancel={() => {
          setReleasing(null);
          setReleaseError(null);
        }}
        onConfirm={async (reason) => {
          if (!releasing) return;
          setBusy(true);
          try {
            await api('POST', `/api/v1/leases/${releasing.leaseId}/release`, { reason });
            setReleasing(null);
            setReleaseError(null);
            await client.invalidateQueries();
          } catch (err) {
            setReleaseError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      />
    </div>
  );
}

const LeaseRow = memo(function LeaseRow({ lease: l, onRelease, denied }: { lease: Lease; onRelease: (l: Lease) => void; denied: string | undefined }) {
  const heldLong = l.state === 'live' && l.heldSeconds > 2 * l.leaseSeconds;
  return (
    <tr className={`border-b border-zinc-100 align-top dark:border-zinc-900 ${l.state === 'expired' ? 'bg-red-50 dark:bg-red-950/40' : ''}`} data-testid={`lease-${l.leaseId}`}>
      <td className="py-2 pr-3 font-mono text-xs" title={l.leaseId}>{shortId(l.leaseId)}</td>
      <td className="pr-3">
        <Link href={`/queues/${encodeURIComponent(l.queue)}?partition=${encodeURIComponent(l.partition)}&group=${encodeURIComponent(l.consumerGroup)}`} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
          {l.queue} / {l.partition}
        </Link>
      </td>
      <td className="pr-3 font-mono">{l.consumerGroup}</td>
      <td className="pr-3 tabular-nums">
        <Link href={messageAtHref(l.partitionId, l.span.from)} className="text-sky-700 hover:underline dark:text-sky-400" aria-label={`First message of span ${l.span.from}–${l.span.to} on ${l.partition}/${l.consumerGroup}`}>{l.span.from}</Link>–{l.span.to} <span className="text-zinc-500">({l.span.size}, {l.acked} acked)</span>
      </td>
      <td className="pr-3 text-xs">{l.holder ?? '—'}</td>
      <td className={`pr-3 tabular-nums ${heldLong ? 'font-medium text-red-600 dark:text-red-400' : ''}`} title={`acquired ${utc(l.acquiredAt)}; leased for ${l.leaseSeconds} s`}>
        {duration(l.heldSeconds)}{l.extensions ? ` (+${l.extensions} ext.)` : ''}
        <div className="text-xs text-zinc-500">of {duration(l.leaseSeconds)}</div>
      </td>
      <td className="pr-3"><Countdown expiresAt={l.expiresAt} /></td>
      <td className={`pr-3 text-right tabular-nums ${l.firstOffsetDeliveries > 3 ? 'font-medium text-red-600 dark:text-red-400' : ''}`}>{l.firstOffsetDeliveries}</td>
      <td className="pr-3">
        <button type="button" onClick={() => onRelease(l)} aria-label={`Force release lease ${l.leaseId} on ${l.partition}/${l.consumerGroup}`}
          disabled={Boolean(denied)} title={denied}
          className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50 disabled:opacity-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950">
          Force release
        </button>
        <div><Link href={`/audit?target=${l.leaseId}`} className="text-xs text-sky-700 hover:underline dark:text-sky-400">audit</Link></div>
      </td>
    </tr>
  );
});
