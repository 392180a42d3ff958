'use client';
import Link from 'next/link';
import type { LeaseList } from '@/lib/broker/leases';
import { count, duration, shortId, utc } from '@/lib/dashboard/format';
import { api } from '../api';
import { Countdown } from '../countdown';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { withSearch } from '@/lib/dashboard/search';
import { UrlTextFilter, useUrlState } from '../url-state';

const STATES: [string, string][] = [
  ['', 'every lease'],
  ['live', 'live'],
  ['expiring', 'expiring soon (< 10 s)'],
  ['expired', 'expired, not yet reclaimed'],
  ['held-long', 'held over twice the lease time'],
  ['redelivered', 'redelivered more than N times'],
  ['stuck', 'stuck (held long or redelivered)'],
];

export function LeasesView({ initial, filters }: { initial: LeaseList; filters: Record<string, string | undefined> }) {
  const { set } = useUrlState();
  const { data = initial, error } = useLiveQuery<LeaseList>(['leases', filters], withSearch('/api/v1/leases', filters), initial);
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
          <select value={filters.state ?? ''} onChange={(e) => set({ state: e.target.value })} className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900" aria-label="State">
            {STATES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        </label>
        {(filters.state === 'redelivered' || filters.state === 'stuck') && text('minDeliveries', 'N (deliveries)', 'w-24')}
        <span className="ml-auto text-zinc-500" data-testid="lease-count">{count(data.leases.length)} leases</span>
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
              <tr key={`${l.leaseId}/${l.partitionId}/${l.consumerGroup}`} className={`border-b border-zinc-100 align-top dark:border-zinc-900 ${l.state === 'expired' ? 'bg-red-50 dark:bg-red-950/40' : ''}`} data-testid={`lease-${l.leaseId}`}>
                <td className="py-2 pr-3 font-mono text-xs" title={l.leaseId}>{shortId(l.leaseId)}</td>
                <td className="pr-3">
                  <Link href={`/queues/${encodeURIComponent(l.queue)}?partition=${encodeURIComponent(l.partition)}&group=${encodeURIComponent(l.consumerGroup)}`} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
                    {l.queue} / {l.partition}
                  </Link>
                </td>
                <td className="pr-3 font-mono">{l.consumerGroup}</td>
                <td className="pr-3 tabular-nums">{l.span.from}–{l.span.to} <span className="text-zinc-500">({l.span.size}, {l.acked} acked)</span></td>
                <td className="pr-3 text-xs">{l.holder ?? '—'}</td>
                <td className={`pr-3 tabular-nums ${l.heldSeconds > 2 * l.leaseTime ? 'font-medium text-red-600 dark:text-red-400' : ''}`} title={`acquired ${utc(l.acquiredAt)}; lease time ${l.leaseTime} s`}>
                  {duration(l.heldSeconds)}{l.extensions ? ` (+${l.extensions} ext.)` : ''}
                </td>
                <td className="pr-3"><Countdown expiresAt={l.expiresAt} /></td>
                <td className={`pr-3 text-right tabular-nums ${l.firstOffsetDeliveries > 3 ? 'font-medium text-red-600 dark:text-red-400' : ''}`}>{l.firstOffsetDeliveries}</td>
                <td className="pr-3">
                  <ReasonAction label="Force release" title="Force release this lease?"
                    description={<>Span {l.span.from}–{l.span.to} of {l.queue}/{l.partition} for <strong>{l.consumerGroup}</strong> becomes claimable at once. The holder <strong>{l.holder ?? 'unknown'}</strong> may still be working on it: its acks will be refused, so the batch will be processed again.</>}
                    confirmLabel="Release"
                    run={(reason) => api('POST', `/api/v1/leases/${l.leaseId}/release`, { reason })} />
                  <div><Link href={`/audit?target=${l.leaseId}`} className="text-xs text-sky-700 hover:underline dark:text-sky-400">audit</Link></div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {data.leases.length === 0 && <p className="py-6 text-center text-sm text-zinc-500">No lease matches.</p>}
      </div>
      <p className="text-xs text-zinc-500">Server time {utc(data.now)}</p>
    </div>
  );
}
