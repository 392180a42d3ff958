'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { shortId, utc } from '@/lib/dashboard/format';
import { messageAtHref, messageHref, queueHref } from '@/lib/dashboard/links';
import { useRefresh } from '../providers';
import { UrlTextFilter, useUrlState } from '../url-state';
import { activity, eventsUrl, recentClaims } from '../client/live';

interface LiveEvent {
  type: string;
  at: string;
  queue?: string;
  partition?: string;
  group?: string;
  pushed?: Record<string, number>;
  partitions?: {
    queue?: string;
    partition?: string;
    group?: string;
    count?: number;
    redelivered?: number;
    expiredLeaseReclaimed?: boolean;
  }[];
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
  deadLetter: 'text-red-600 dark:text-red-400',
  skip: 'text-amber-700 dark:text-amber-400',
};

/** The event types the feed can be narrowed to. */
const EVENT_TYPES = [
  'push',
  'claim',
  'ack',
  'expiry',
  'release',
  'pause',
  'resume',
  'seek',
  'deadLetter',
  'skip',
  'requeue',
  'discard',
  'maintenance',
];

/** The holders an event names: a claim's, an expired lease's, a released lease's partitions'. */
const holdersOf = (e: LiveEvent): string[] =>
  [e.holder, ...((e.partitions ?? []) as { holder?: string }[]).map((p) => p.holder)].filter(
    (h): h is string => typeof h === 'string',
  );

/** One line per event, in words an operator reads at a glance. */
function describe(e: LiveEvent): string {
  const parts = e.partitions ?? [];
  switch (e.type) {
    case 'push':
      return `${e.queue}: ${Object.entries(e.pushed ?? {})
        .map(([p, n]) => `${n} → ${p}`)
        .join(', ')}`;
    case 'claim':
      return `${e.group} claimed ${parts.map((p) => `${p.count} from ${p.queue}/${p.partition}${p.redelivered ? ` (${p.redelivered} redelivered)` : ''}${p.expiredLeaseReclaimed ? ' after an expired lease,' : ''}`).join(', ')}${e.autoAck ? ' (autoAck)' : ` under lease ${shortId(String(e.leaseId))}`}${e.holder ? ` by ${e.holder}` : ''}${e.earlier && e.ended ? ` (since ${e.ended})` : ''}`;
    case 'ack':
      return `${e.group} on ${e.queue}/${e.partition}: ${e.completed} completed, ${e.failed} failed${Number(e.deadLettered) ? `, ${e.deadLettered} dead-lettered` : ''}${e.leaseReleased ? ', lease released' : ''}`;
    case 'expiry':
      return `lease ${shortId(String(e.leaseId))} of ${e.group} on ${e.queue}/${e.partition} expired (holder ${e.holder ?? 'unknown'})`;
    case 'release':
      return `${shortId(String(e.leaseId))} of ${parts.map((p) => `${p.queue}/${p.partition}`).join(', ') || '?'} force-released by ${e.actor}${e.reason ? `: ${e.reason}` : ''}`;
    case 'pause':
      return `${e.queue}/${e.partition} paused for ${e.group} by ${e.actor}: ${e.reason ?? ''}`;
    case 'resume':
      return `${e.queue}/${e.partition} resumed for ${e.group} by ${e.actor}`;
    case 'maintenance':
      return `pop maintenance ${e.enabled ? 'ON' : 'off'} by ${e.actor}${e.reason ? `: ${e.reason}` : ''}`;
    case 'requeue':
      return `${e.count} dead letter(s) of ${e.queue} requeued as new messages by ${e.actor}: ${e.reason ?? ''}`;
    case 'discard':
      return `${e.count} dead letter(s) of ${e.queue} discarded by ${e.actor}: ${e.reason ?? ''}`;
    case 'deadLetter':
      return `offset ${e.offset} of ${e.queue}/${e.partition} moved to ${e.group}'s dead letters by ${e.actor}: ${e.reason ?? ''}`;
    case 'skip':
      return `offset ${e.offset} of ${e.queue}/${e.partition} skipped for ${e.group} by ${e.actor}: ${e.reason ?? ''}`;
    case 'seek':
      return `${e.group} on ${e.queue} moved ${e.toEnd ? 'to the end' : `to ${e.timestamp}`} by ${e.actor}`;
    default:
      return JSON.stringify(e);
  }
}

type MessageItem = {
  partition: string;
  partitionId: string;
  group: string;
  offset: number;
  transactionId: string;
  newTransactionId: string | null;
};

/** Links to the messages an event names: an expired lease's span, the messages of a requeue or discard. */
function EventLinks({ e }: { e: LiveEvent }) {
  const link = 'text-sky-700 hover:underline dark:text-sky-400';
  if (e.type === 'expiry' && typeof e.partitionId === 'string' && typeof e.from === 'number') {
    return (
      <Link href={messageAtHref(e.partitionId, e.from)} className={link}>
        span {e.from}–{String(e.to)}
      </Link>
    );
  }
  if ((e.type === 'requeue' || e.type === 'discard') && Array.isArray(e.items)) {
    return (e.items as MessageItem[]).map((m) => {
      const transactionId = m.newTransactionId ?? m.transactionId;
      return (
        <Link
          key={`${m.partitionId}/${m.offset}/${m.group}`}
          href={messageHref(m.partitionId, transactionId)}
          className={`mr-2 font-mono text-xs ${link}`}
        >
          {transactionId}
        </Link>
      );
    });
  }
  return null;
}

/** The (queue, partition) pairs an event names, for the server's counts. */
function partitionsOf(e: LiveEvent): [string, string][] {
  if (e.type === 'push') return Object.keys(e.pushed ?? {}).map((p) => [e.queue ?? '', p]);
  const named: [string, string][] = (e.partitions ?? [])
    .filter((p) => p.queue && p.partition)
    .map((p) => [p.queue!, p.partition!]);
  if (e.queue && e.partition) named.push([e.queue, e.partition]);
  return named;
}

/** Partitions whose activity the table counts: the most recently named first, at most this many. */
const MAX_COUNTED = 100;

export function LiveView({ filters }: { filters: { queue?: string; group?: string; type?: string; holder?: string } }) {
  const { set } = useUrlState();
  const { intervalMs, paused } = useRefresh();
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [status, setStatus] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [frozen, setFrozen] = useState(false);
  const [openedAt, setOpenedAt] = useState<string | null>(null);
  // every partition the feed named since the page opened (not only those of the events still listed)
  const counted = useRef(new Map<string, [string, string]>());
  const [countedVersion, setCountedVersion] = useState(0);
  const note = (e: LiveEvent) => {
    let added = false;
    for (const k of partitionsOf(e)) {
      const key = JSON.stringify(k);
      if (counted.current.has(key)) counted.current.delete(key);
      else added = true;
      counted.current.set(key, k);
    }
    while (counted.current.size > MAX_COUNTED) counted.current.delete(counted.current.keys().next().value!);
    if (added) setCountedVersion((v) => v + 1);
  };
  useEffect(() => {
    setEvents([]);
    setOpenedAt(null);
    counted.current = new Map();
    let open = true;
    const source = new EventSource(eventsUrl(filters));
    source.onopen = () => setStatus('live');
    source.onerror = () => setStatus('reconnecting');
    source.onmessage = (m) => {
      const e = JSON.parse(m.data) as LiveEvent;
      if (e.type === 'hello') {
        setOpenedAt((at) => at ?? e.at);
        return;
      }
      note(e);
      // a claim the history listed already (it raced the page's opening) is listed once, live
      setEvents((list) =>
        [e, ...list.filter((x) => !(x.earlier && e.type === 'claim' && x.leaseId && x.leaseId === e.leaseId))].slice(
          0,
          MAX_EVENTS,
        ),
      );
    };
    // the history before the page opened: the last claims, listed after what arrives live
    void recentClaims(filters)
      .then(
        (r) =>
          open &&
          setEvents((list) => {
            const live = new Set(list.filter((x) => x.type === 'claim').map((x) => x.leaseId));
            return [
              ...list,
              ...(r.events as unknown as LiveEvent[]).filter((x) => !x.leaseId || !live.has(x.leaseId)),
            ].slice(0, MAX_EVENTS);
          }),
      )
      .catch(() => {});
    return () => {
      open = false;
      source.close();
    };
  }, [filters.queue, filters.group]);
  const [shown, setShown] = useState<LiveEvent[]>([]);
  useEffect(() => {
    if (!frozen) setShown(events);
  }, [events, frozen]);
  const keys = useMemo(() => [...counted.current.values()].reverse(), [countedVersion]); // eslint-disable-line react-hooks/exhaustive-deps
  const { data: counts } = useQuery({
    queryKey: ['live-activity', openedAt, filters.group ?? null, keys],
    queryFn: ({ signal }) =>
      activity({ since: openedAt!, partitions: JSON.stringify(keys), group: filters.group }, signal),
    enabled: openedAt !== null && keys.length > 0,
    refetchInterval: paused || frozen ? false : Math.min(intervalMs || 2000, 2000),
    placeholderData: (previous) => previous,
  });
  const order = new Map(keys.map((k, i) => [JSON.stringify(k), i]));
  const perPartition = [...(counts?.partitions ?? [])].sort(
    (a, b) =>
      (order.get(JSON.stringify([a.queue, a.partition])) ?? 0) -
      (order.get(JSON.stringify([b.queue, b.partition])) ?? 0),
  );
  const listed = shown.filter(
    (e) =>
      (!filters.type || e.type === filters.type) &&
      (!filters.holder || holdersOf(e).some((h) => h.toLowerCase().includes(filters.holder!.toLowerCase()))),
  );
  const text = (name: 'queue' | 'group', label: string) => (
    <UrlTextFilter name={name} label={label} match="exact" value={filters[name]} className="w-48" />
  );
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-3">
        <div className="mr-auto">
          <h1 className="text-2xl font-semibold">Live</h1>
          <p className="text-sm text-muted">
            Pushes, claims, acks, failures, expiries, releases, pauses, seeks, dead-letter requeues and discards, and
            maintenance, as they happen on any instance.
          </p>
        </div>
        {text('queue', 'Queue')}
        {text('group', 'Group')}
        <UrlTextFilter name="holder" label="Holder" match="contains" value={filters.holder} className="w-40" />
        <label className="flex flex-col text-sm">
          <span className="text-xs text-muted">Event</span>
          <select
            value={filters.type ?? ''}
            onChange={(e) => set({ type: e.target.value })}
            aria-label="Event type"
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
          >
            <option value="">every event</option>
            {EVENT_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <button
          type="button"
          onClick={() => setFrozen(!frozen)}
          aria-pressed={frozen}
          className="rounded border border-zinc-300 px-2 py-1 text-sm dark:border-zinc-700"
        >
          {frozen ? 'Resume feed' : 'Freeze feed'}
        </button>
        <span
          className={`text-sm ${status === 'live' ? 'text-emerald-700 dark:text-emerald-400' : 'text-amber-700'}`}
          data-testid="feed-status"
        >
          ● {status}
        </span>
      </div>
      <div className="grid gap-5 lg:grid-cols-[1fr_24rem]">
        <section aria-label="Events" className="min-w-0">
          <ol className="divide-y divide-zinc-100 text-sm dark:divide-zinc-900" data-testid="feed">
            {listed.map((e, i) => (
              <li
                key={`${e.at}-${i}-${e.type}`}
                className={`flex gap-3 py-1 ${e.earlier ? 'opacity-70' : ''}`}
                data-testid={e.earlier ? 'event-earlier' : `event-${e.type}`}
              >
                <span className="w-20 shrink-0 tabular-nums text-muted" title={utc(e.at)}>
                  {e.at.slice(11, 23)}
                </span>
                <span className={`w-24 shrink-0 font-medium ${TONE[e.type] ?? ''}`}>
                  {e.type}
                  {e.earlier ? <span className="block text-xs font-normal text-muted">before opening</span> : null}
                </span>
                <span className="min-w-0 break-words">
                  {describe(e)} <EventLinks e={e} />
                </span>
              </li>
            ))}
          </ol>
          {listed.length === 0 && (
            <p className="py-6 text-center text-sm text-muted">
              {shown.length ? 'No event matches the filters.' : 'Waiting for activity…'}
            </p>
          )}
        </section>
        <section aria-label="Per-partition activity" className="min-w-0 overflow-x-auto">
          <h2 className="mb-2 text-sm font-semibold">
            Per partition, since this page opened{openedAt ? ` (${openedAt.slice(11, 19)} UTC)` : ''}
          </h2>
          <p className="mb-1 text-xs text-muted">
            Counted by the database for every partition the feed named, not from the events listed.
          </p>
          <table className="w-full text-left text-xs">
            <thead className="text-muted">
              <tr>
                <th className="py-1 pr-2">Partition</th>
                <th className="px-2 text-right">pushed</th>
                <th className="px-2 text-right">claimed</th>
                <th className="px-2 text-right">acked</th>
                <th className="px-2 text-right">failed</th>
                <th className="pl-2 text-right" title="leases that expired without an ack">
                  expired
                </th>
              </tr>
            </thead>
            <tbody>
              {perPartition.map((r) => (
                <tr
                  key={`${r.queue}/${r.partition}`}
                  className="border-t border-zinc-100 dark:border-zinc-900"
                  data-testid={`partition-activity`}
                  data-partition={`${r.queue}/${r.partition}`}
                >
                  <td className="py-1 pr-2 font-mono wrap-anywhere">
                    <Link href={queueHref(r.queue, { partition: r.partition })} className="hover:underline">
                      {r.queue}/{r.partition}
                    </Link>
                  </td>
                  <td className="px-2 text-right tabular-nums" data-testid="pushed">
                    {r.pushed}
                  </td>
                  <td className="px-2 text-right tabular-nums" data-testid="claimed">
                    {r.claimed}
                  </td>
                  <td className="px-2 text-right tabular-nums" data-testid="acked">
                    {r.acked}
                  </td>
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
