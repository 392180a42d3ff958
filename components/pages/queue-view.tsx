'use client';
import Link from 'next/link';
import type { CursorRow, QueuePage } from '@/lib/dashboard/queue';
import { bytes, count, duration, shortId, utc } from '@/lib/dashboard/format';
import { api } from '../api';
import { RateChart } from '../charts/rate-chart';
import { Countdown } from '../countdown';
import { OffsetBar } from '../offset-bar';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { UrlTextFilter, useUrlState } from '../url-state';

function apiPath(queue: string, p: QueuePage['params']) {
  const qs = new URLSearchParams({ page: String(p.page), pageSize: String(p.pageSize), sort: p.sort });
  if (p.group) qs.set('group', p.group);
  if (p.partition) qs.set('partition', p.partition);
  return `/api/dashboard/queues/${encodeURIComponent(queue)}?${qs}`;
}

export function QueueView({ initial }: { initial: QueuePage }) {
  const { set } = useUrlState();
  const p = initial.params;
  const { data = initial, error } = useLiveQuery<QueuePage>(['queue', initial.queue.name, p], apiPath(initial.queue.name, p), initial);
  const q = data.queue;
  const first = data.total === 0 ? 0 : (p.page - 1) * p.pageSize + 1;
  const last = Math.min(p.page * p.pageSize, data.total);
  return (
    <div className="space-y-4">
      <div>
        <p className="text-sm text-zinc-500"><Link href="/" className="hover:underline">Overview</Link> /</p>
        <h1 className="font-mono text-2xl font-semibold">{q.name || '(empty name)'}</h1>
        <p className="text-sm text-zinc-500">
          namespace <span className="font-mono">{q.namespace || '—'}</span> · task <span className="font-mono">{q.task || '—'}</span> · lease {q.leaseTime} s ·{' '}
          {count(q.partitions)} partitions · groups: {q.groups.length ? q.groups.join(', ') : 'none yet'}
        </p>
        <StorageLine storage={q.storage} />
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <label className="flex flex-col">
          <span className="text-xs text-zinc-500">Group</span>
          <select value={p.group ?? ''} onChange={(e) => set({ group: e.target.value, page: null })} className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900" aria-label="Group">
            <option value="">all groups</option>
            {q.groups.map((g) => <option key={g} value={g}>{g}</option>)}
          </select>
        </label>
        <UrlTextFilter name="partition" label="Partition contains" value={p.partition} />
        <label className="flex flex-col">
          <span className="text-xs text-zinc-500">Sort</span>
          <select value={p.sort} onChange={(e) => set({ sort: e.target.value, page: null })} className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900" aria-label="Sort">
            <option value="attention">needs attention first</option>
            <option value="lag">oldest pending first</option>
            <option value="partition">partition name</option>
          </select>
        </label>
        <div className="ml-auto flex items-center gap-2">
          <span className="text-zinc-500" data-testid="row-range">rows {count(first)}–{count(last)} of {count(data.total)}</span>
          <button type="button" disabled={p.page <= 1} onClick={() => set({ page: p.page - 1 })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Previous</button>
          <button type="button" disabled={last >= data.total} onClick={() => set({ page: p.page + 1 })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Next</button>
        </div>
      </div>
      {p.group && <GroupActions queue={q.name} group={p.group} />}
      <RateChart queue={q.name} group={p.group} />
      {error && <p role="alert" className="text-sm text-red-600">Refresh failed: {(error as Error).message}</p>}
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-zinc-500 dark:border-zinc-800">
            <tr>
              <th className="py-2 pr-3">Partition</th>
              <th className="pr-3">Group</th>
              <th className="pr-3">Committed → leased → head</th>
              <th className="pr-3 text-right">Lag</th>
              <th className="pr-3">Lease</th>
              <th className="pr-3 text-right" title="acked inside the lease / redeliveries / failures / dead letters">Acked · redel. · fail · DLQ</th>
              <th className="pr-3">Pause</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((r) => <CursorLine key={`${r.partitionId}/${r.group}`} row={r} queue={q.name} />)}
          </tbody>
        </table>
        {data.rows.length === 0 && <p className="py-6 text-center text-sm text-zinc-500">No partitions match.</p>}
      </div>
      <p className="text-xs text-zinc-500" data-testid="server-timing">Server time {utc(data.now)} · read in {data.tookMs} ms</p>
    </div>
  );
}

function CursorLine({ row: r, queue }: { row: CursorRow; queue: string }) {
  const target = `${r.partitionId}/${r.group}`;
  return (
    <tr className={`border-b border-zinc-100 align-top dark:border-zinc-900 ${r.leaseState === 'expired' ? 'bg-red-50 dark:bg-red-950/40' : ''}`} data-testid={`cursor-${r.partition}-${r.group ?? ''}`}>
      <td className="py-2 pr-3 font-mono">{r.partition}</td>
      <td className="pr-3 font-mono">{r.group ?? <span className="text-zinc-400">no group yet</span>}</td>
      <td className="pr-3"><OffsetBar committed={r.committed} leaseEnd={r.leaseEnd} head={r.head} leaseState={r.leaseState} /></td>
      <td className="pr-3 text-right tabular-nums">
        <div data-testid="lag">{count(r.lag)}</div>
        <div className="text-xs text-zinc-500">{r.timeLagSeconds === null ? '' : duration(r.timeLagSeconds)}</div>
      </td>
      <td className="pr-3">
        {r.leaseId ? (
          <div className="space-y-0.5">
            <div><Countdown expiresAt={r.expiresAt} /></div>
            <div className="font-mono text-xs" title={r.leaseId}>{shortId(r.leaseId)}{r.extensions ? ` · extended ×${r.extensions}` : ''}</div>
            <div className="text-xs text-zinc-500" title={`acquired ${utc(r.acquiredAt)}`}>{r.holder ?? 'unknown holder'}</div>
            <ReasonAction
              label="Force release"
              title="Force release this lease?"
              description={<>The batch becomes claimable again at once; the holder <strong>{r.holder ?? 'unknown'}</strong> keeps working on it but its acks will be refused.</>}
              confirmLabel="Release"
              run={(reason) => api('POST', `/api/v1/leases/${r.leaseId}/release`, { reason })}
            />
          </div>
        ) : (
          <span className="text-zinc-400">none</span>
        )}
      </td>
      <td className="pr-3 text-right tabular-nums">
        {r.ackedInLease} · {count(r.redeliveries)} · {count(r.failures)} · {count(r.deadLetters)}
      </td>
      <td className="pr-3">
        {r.group === null ? null : r.paused ? (
          <div className="space-y-0.5">
            <span className="font-medium text-amber-700 dark:text-amber-400" data-testid="paused">paused</span>
            <div className="text-xs text-zinc-500">{r.pausedReason}{r.pausedBy ? ` — ${r.pausedBy}` : ''}{r.pausedUntil ? `, until ${utc(r.pausedUntil)}` : ''}</div>
            <ReasonAction label="Resume" title={`Resume ${r.partition} for ${r.group}?`} description="Pops of this group claim from this partition again." confirmLabel="Resume"
              run={(reason) => api('POST', `/api/v1/cursors/${r.partitionId}/${encodeURIComponent(r.group!)}/pause`, { paused: false, reason })} />
          </div>
        ) : (
          <ReasonAction label="Pause" title={`Pause ${r.partition} for ${r.group}?`} timeField={{ label: 'Resume automatically at' }}
            description={<>Pops of <strong>{r.group}</strong> will skip partition <strong>{r.partition}</strong> of {queue} until it is resumed. A live lease is not ended.</>}
            confirmLabel="Pause"
            run={(reason, until) => api('POST', `/api/v1/cursors/${r.partitionId}/${encodeURIComponent(r.group!)}/pause`, { paused: true, reason, until })} />
        )}
        <div><Link href={`/audit?target=${encodeURIComponent(target)}`} className="text-xs text-sky-700 hover:underline dark:text-sky-400">audit</Link></div>
      </td>
    </tr>
  );
}

const seconds = (s: number | null) => (s === null ? '—' : duration(s));

/** What bounds the queue's storage (sql/013), what it holds, and what the lifecycle job last removed. */
function StorageLine({ storage: s }: { storage: QueuePage['queue']['storage'] }) {
  return (
    <p className="text-sm text-zinc-500" data-testid="storage">
      stores {count(s.stored)} messages ({bytes(s.bytes)}) · retention {seconds(s.retentionSeconds)} · after every group {seconds(s.completedRetentionSeconds ?? s.ttl)}
      {' '}· max wait {seconds(s.maxWaitTimeSeconds)} · max size {s.maxSize === null ? '—' : count(s.maxSize)}
      {s.lastRun ? ` · last cleanup ${utc(s.lastRun.at)}: ${count(s.lastRun.deleted)} deleted, ${count(s.lastRun.evicted)} evicted unconsumed` : ''}
    </p>
  );
}

/** Moving or dropping a whole group's cursors on this queue. */
function GroupActions({ queue, group }: { queue: string; group: string }) {
  const base = `/api/v1/consumer-groups/${encodeURIComponent(group)}/queues/${encodeURIComponent(queue)}`;
  return (
    <section className="flex flex-wrap items-center gap-2 rounded border border-zinc-200 px-3 py-2 text-sm dark:border-zinc-800" aria-label="Group actions">
      <span>Group <strong className="font-mono">{group}</strong> on this queue:</span>
      <ReasonAction label="Seek to end" title={`Skip everything ${group} has not consumed on ${queue}?`} confirmLabel="Seek to end"
        description="Every cursor of the group on this queue moves to the head: the backlog is skipped, live leases end and their acks are refused."
        run={(reason) => api('POST', `${base}/seek`, { toEnd: true, reason })} />
      <ReasonAction label="Seek to time" title={`Move ${group} on ${queue} to a point in time?`} confirmLabel="Seek"
        timeField={{ label: 'Start at the first message pushed at or after', required: true }}
        description="Every cursor of the group on this queue moves to just before the first message pushed at or after that time: later messages are delivered again (or skipped), live leases end."
        run={(reason, at) => api('POST', `${base}/seek`, { timestamp: at, reason })} />
      <ReasonAction label="Delete group here" title={`Delete ${group}'s cursors on ${queue}?`} confirmLabel="Delete"
        description="The group's cursors, attempt counts, dead letters and subscription on this queue are dropped. If its consumers pop again they start over as a new group."
        run={(reason) => api('DELETE', `${base}?reason=${encodeURIComponent(reason)}`)} />
    </section>
  );
}
