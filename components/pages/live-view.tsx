'use client';
import Link from 'next/link';
import { useEffect, useMemo, useState } from 'react';
import { shortId, utc } from '@/lib/dashboard/format';
import { messageAtHref, messageHref, queueHref } from '@/lib/dashboard/links';
import { withSearch } from '@/lib/dashboard/search';
import { UrlTextFilter } from '../url-state';

interface LiveEvent {
  type: string;
  at: string;
  queue?: string;
  partition?: string;
  group?: string;
  pushed?: Record<string, number>;
  partitions?: { queue?: string; partition?: string; group?: string; count?: number; redelivered?: number; expiredLeaseReclaimed?: boolean }[];
  [k: string]: unknown;
}

const MAX_EVENTS = 500;

const TONE: Record<string, string> = {
  push: 'text-sky-700 dark:text-sky-400',
  claim: 'text-indigo-700 dark:text-indigo-400',
  ack: 'text-emerald-700 dark:text-emerald-400',
  expiry: 'text-red-600 dark:text-red-400',
  release: 'text-red-600 dark:text-red-400',
  pause: 'text-amber-700 dark:text-amber-400',
  resume: 'text-amber-700 dark:text-amber-400',
  maintenance: 'text-red-600 dark:text-red-400',
  seek: 'text-amber-700 dark:text-amber-400',
  requeue: 'text-amber-700 dark:text-amber-400',
  discard: 'text-red-600 dark:text-red-400',
};

/** One line per event, in words an operator reads at a glance. */
function describe(e: LiveEvent): string {
  const parts = e.partitions ?? [];
  switch (e.type) {
    case 'push': return `${e.queue}: ${Object.entries(e.pushed ?? {}).map(([p, n]) => `${n} → ${p}`).join(', ')}`;
    case 'claim': return `${e.group} claimed ${parts.map((p) => `${p.count} from ${p.queue}/${p.partition}${p.redelivered ? ` (${p.redelivered} redelivered)` : ''}${p.expiredLeaseReclaimed ? ' after an expired lease' : ''}`).join(', ')}${e.autoAck ? ' (autoAck)' : ` lease ${shortId(String(e.leaseId))}`}`;
    case 'ack': return `${e.group} on ${e.queue}/${e.partition}: ${e.completed} completed, ${e.failed} failed${Number(e.deadLettered) ? `, ${e.deadLettered} dead-lettered` : ''}${e.leaseReleased ? ', lease released' : ''}`;
    case 'expiry': return `lease ${shortId(String(e.leaseId))} of ${e.group} on ${e.queue}/${e.partition} expired (holder ${e.holder ?? 'unknown'})`;
    case 'release': return `${shortId(String(e.leaseId))} of ${parts.map((p) => `${p.queue}/${p.partition}`).join(', ') || '?'} force-released by ${e.actor}${e.reason ? `: ${e.reason}` : ''}`;
    case 'pause': return `${e.queue}/${e.partition} paused for ${e.group} by ${e.actor}: ${e.reason ?? ''}`;
    case 'resume': return `${e.queue}/${e.partition} resumed for ${e.group} by ${e.actor}`;
    case 'maintenance': return `pop maintenance ${e.enabled ? 'ON' : 'off'} by ${e.actor}${e.reason ? `: ${e.reason}` : ''}`;
    case 'requeue': return `${e.count} dead letter(s) of ${e.queue} requeued as new messages by ${e.actor}: ${e.reason ?? ''}`;
    case 'discard': return `${e.count} dead letter(s) of ${e.queue} discarded by ${e.actor}: ${e.reason ?? ''}`;
    case 'seek': return `${e.group} on ${e.queue} moved ${e.toEnd ? 'to the end' : `to ${e.timestamp}`} by ${e.actor}`;
    default: return JSON.stringify(e);
  }
}

type MessageItem = { partition: string; partitionId: string; group: string; offset: number; transactionId: string; newTransactionId: string | null };

/** Links to the messages an event names: an expired lease's span, the messages of a requeue or discard. */
function EventLinks({ e }: { e: LiveEvent }) {
  const link = 'text-sky-700 hover:underline dark:text-sky-400';
  if (e.type === 'expiry' && typeof e.partitionId === 'string' && typeof e.from === 'number') {
    return <Link href={messageAtHref(e.partitionId, e.from)} className={link}>span {e.from}–{String(e.to)}</Link>;
  }
  if ((e.type === 'requeue' || e.type === 'discard') && Array.isArray(e.items)) {
    return (e.items as MessageItem[]).map((m) => {
      const transactionId = m.newTransactionId ?? m.transactionId;
      return <Link key={`${m.partitionId}/${m.offset}/${m.group}`} href={messageHref(m.partitionId, transactionId)} className={`mr-2 font-mono text-xs ${link}`}>{transactionId}</Link>;
    });
  }
  return null;
}

/** Per (queue, partition): what the feed has shown since the page opened. */
function activity(events: LiveEvent[]) {
  const rows = new Map<string, { queue: string; partition: string; pushed: number; claimed: number; acked: number; failed: number; expired: number; last: string }>();
  const row = (queue = '?', partition = '?', at: string) => {
    const key = `${queue}/${partition}`;
    if (!rows.has(key)) rows.set(key, { queue, partition, pushed: 0, claimed: 0, acked: 0, failed: 0, expired: 0, last: at });
    const r = rows.get(key)!;
    if (at > r.last) r.last = at;
    return r;
  };
  for (const e of events) {
    if (e.type === 'push') for (const [p, n] of Object.entries(e.pushed ?? {})) row(e.queue, p, e.at).pushed += n;
    if (e.type === 'claim') for (const p of e.partitions ?? []) row(p.queue, p.partition, e.at).claimed += p.count ?? 0;
    if (e.type === 'ack') {
      const r = row(e.queue, e.partition, e.at);
      r.acked += Number(e.completed ?? 0);
      r.failed += Number(e.failed ?? 0);
    }
    if (e.type === 'expiry') row(e.queue, e.partition, e.at).expired += 1;
  }
  return [...rows.values()].sort((a, b) => b.last.localeCompare(a.last));
}

export function LiveView({ filters }: { filters: { queue?: string; group?: string } }) {
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [status, setStatus] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [frozen, setFrozen] = useState(false);
  useEffect(() => {
    setEvents([]);
    const source = new EventSource(withSearch('/api/v1/events', filters));
    source.onopen = () => setStatus('live');
    source.onerror = () => setStatus('reconnecting');
    source.onmessage = (m) => {
      const e = JSON.parse(m.data) as LiveEvent;
      if (e.type === 'hello') return;
      setEvents((list) => [e, ...list].slice(0, MAX_EVENTS));
    };
    return () => source.close();
  }, [filters.queue, filters.group]);
  const [shown, setShown] = useState<LiveEvent[]>([]);
  useEffect(() => {
    if (!frozen) setShown(events);
  }, [events, frozen]);
  const perPartition = useMemo(() => activity(shown), [shown]);
  const text = (name: 'queue' | 'group', label: string) => <UrlTextFilter name={name} label={label} match="exact" value={filters[name]} className="w-48" />;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-3">
        <div className="mr-auto">
          <h1 className="text-2xl font-semibold">Live</h1>
          <p className="text-sm text-muted">Pushes, claims, acks, failures, expiries, releases, pauses, seeks, dead-letter requeues and discards, and maintenance, as they happen on any instance.</p>
        </div>
        {text('queue', 'Queue')}
        {text('group', 'Group')}
        <button type="button" onClick={() => setFrozen(!frozen)} aria-pressed={frozen} className="rounded border border-zinc-300 px-2 py-1 text-sm dark:border-zinc-700">
          {frozen ? 'Resume feed' : 'Freeze feed'}
        </button>
        <span className={`text-sm ${status === 'live' ? 'text-emerald-700 dark:text-emerald-400' : 'text-amber-700'}`} data-testid="feed-status">● {status}</span>
      </div>
      <div className="grid gap-5 lg:grid-cols-[1fr_24rem]">
        <section aria-label="Events">
          <ol className="divide-y divide-zinc-100 text-sm dark:divide-zinc-900" data-testid="feed">
            {shown.map((e, i) => (
              <li key={`${e.at}-${i}-${e.type}`} className="flex gap-3 py-1" data-testid={`event-${e.type}`}>
                <span className="w-20 shrink-0 tabular-nums text-muted" title={utc(e.at)}>{e.at.slice(11, 23)}</span>
                <span className={`w-24 shrink-0 font-medium ${TONE[e.type] ?? ''}`}>{e.type}</span>
                <span className="min-w-0 break-words">{describe(e)} <EventLinks e={e} /></span>
              </li>
            ))}
          </ol>
          {shown.length === 0 && <p className="py-6 text-center text-sm text-muted">Waiting for activity…</p>}
        </section>
        <section aria-label="Per-partition activity">
          <h2 className="mb-2 text-sm font-semibold">Per partition, since this page opened</h2>
          <table className="w-full text-left text-xs">
            <thead className="text-muted">
              <tr>
                <th className="py-1 pr-2">Partition</th>
                <th className="px-2 text-right">pushed</th>
                <th className="px-2 text-right">claimed</th>
                <th className="px-2 text-right">acked</th>
                <th className="px-2 text-right">failed</th>
                <th className="pl-2 text-right" title="leases that expired without an ack">expired</th>
              </tr>
            </thead>
            <tbody>
              {perPartition.map((r) => (
                <tr key={`${r.queue}/${r.partition}`} className="border-t border-zinc-100 dark:border-zinc-900" data-testid="partition-activity">
                  <td className="py-1 pr-2 font-mono break-all"><Link href={queueHref(r.queue, { partition: r.partition })} className="hover:underline">{r.queue}/{r.partition}</Link></td>
                  <td className="px-2 text-right tabular-nums">{r.pushed}</td>
                  <td className="px-2 text-right tabular-nums">{r.claimed}</td>
                  <td className="px-2 text-right tabular-nums">{r.acked}</td>
                  <td className={`px-2 text-right tabular-nums ${r.failed ? 'text-red-600' : ''}`}>{r.failed}</td>
                  <td className={`pl-2 text-right tabular-nums ${r.expired ? 'text-red-600' : ''}`}>{r.expired}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
    </div>
  );
}
