'use client';
import Link from 'next/link';
import { utc } from '@/lib/dashboard/format';
import { ListTable } from '../list-table';
import { PageButton } from '../page-buttons';
import { useLiveQuery } from '../providers';
import { leasesHref, messageAtHref, messageHref, queueHref } from '@/lib/dashboard/links';
import type { AuditFilters } from '@/lib/dashboard/audit-filters';
import { UrlTextFilter, useUrlState } from '../url-state';
import { type AuditEntry, type AuditPage, auditPath } from '../client/audit';

type Touched = {
  queue?: string;
  partition?: string;
  partitionId?: string;
  group?: string;
  from?: number;
  to?: number;
  /** a dead letter of a bulk requeue or discard: its message's offset */
  offset?: number;
};

/** The objects an entry touched, each with where it lives in the dashboard (sql/017's details). */
function touchedLinks(e: AuditEntry): { href: string; label: string }[] {
  const d = e.details as {
    queue?: string;
    queues?: string[];
    group?: string;
    leaseId?: string;
    partitions?: Touched[] | number;
    groups?: unknown;
  };
  const links: { href: string; label: string }[] = [];
  // seeks audited before sql/017 stored a count of cursors under `partitions`
  const partitions = Array.isArray(d.partitions) ? d.partitions : [];
  if (e.action === 'lease.release') links.push({ href: leasesHref({ lease: e.target }), label: `lease ${e.target}` });
  if (e.targetType === 'message') {
    const slash = e.target.indexOf('/');
    links.push({ href: messageHref(e.target.slice(0, slash), e.target.slice(slash + 1)), label: 'message' });
  }
  const queues = [
    ...new Set([
      ...(d.queue ? [d.queue] : []),
      ...(d.queues ?? []),
      ...partitions.map((p) => p.queue).filter((q): q is string => Boolean(q)),
    ]),
  ];
  for (const q of queues)
    links.push({ href: queueHref(q, { group: d.group }), label: d.group ? `${q} (${d.group})` : q });
  for (const p of partitions.slice(0, 10)) {
    if (!p.queue || !p.partition) continue;
    if (p.offset !== undefined && p.partitionId) {
      links.push({
        href: messageAtHref(p.partitionId, p.offset),
        label: `${p.queue} / ${p.partition}${p.group ? ` (${p.group})` : ''} @${p.offset}`,
      });
      continue;
    }
    const span = p.from !== undefined && p.to !== undefined ? ` ${p.from}–${p.to}` : '';
    links.push({
      href: queueHref(p.queue, { partition: p.partition, group: p.group ?? d.group }),
      label: `${p.queue} / ${p.partition}${(p.group ?? d.group) ? ` (${p.group ?? d.group})` : ''}${span}`,
    });
  }
  if (partitions.length > 10)
    links.push({
      href: queueHref(queues[0] ?? '', { group: d.group }),
      label: `and ${partitions.length - 10} more ${e.targetType === 'dead_letters' ? 'dead letters' : 'partitions'}`,
    });
  if (links.length === 0) {
    if (e.targetType === 'system') links.push({ href: '/', label: 'overview' });
    if (e.targetType === 'consumer_group' && e.target.includes('@')) {
      const [group, queue] = e.target.split('@');
      links.push({ href: queueHref(queue.split('/')[0], { group }), label: e.target });
    }
    if (e.targetType === 'subscription') {
      const [queue, group] = e.target.split('/');
      links.push({ href: queueHref(queue, { group }), label: e.target });
    }
  }
  return links;
}

/** Every action the SQL functions audit (grep `queen.audit(` in sql/). */
const AUDIT_ACTIONS = [
  'lease.release',
  'cursor.pause',
  'cursor.resume',
  'cursor.seek',
  'maintenance.on',
  'maintenance.off',
  'subscription.set',
  'subscription.move',
  'consumer_group.delete',
  'message.delete',
  'message.dead_letter',
  'message.skip',
  'dlq.requeue',
  'dlq.discard',
  'queue.configure',
  'queue.delete',
  'streams.reset',
];

export function AuditView({
  initial,
  filters,
  filterError,
}: {
  initial: AuditPage;
  filters: AuditFilters;
  /** why the server could not read the filtered list (a malformed filter) */
  filterError?: string;
}) {
  const { set } = useUrlState();
  const { data = initial, error } = useLiveQuery<AuditPage>(['audit', filters], auditPath(filters), initial);
  // a malformed filter: its error, and no list (the server's first data is the unfiltered one)
  const failed = error ? (error as Error).message : data === initial ? filterError : undefined;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Audit log</h1>
        <p className="text-sm text-muted">
          Every operator action: who, what, on which object, why, and what came of it. Newest first.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <UrlTextFilter name="target" label="Target" match="contains" value={filters.target} className="w-80" />
        <UrlTextFilter name="queue" label="Queue" match="exact" value={filters.queue} />
        <UrlTextFilter name="group" label="Group" match="exact" value={filters.group} />
        <UrlTextFilter
          name="partitionId"
          label="Partition id"
          match="id"
          value={filters.partitionId}
          className="w-80 font-mono"
        />
        <label className="flex flex-col">
          <span className="text-xs text-muted">Action</span>
          <select
            value={filters.action ?? ''}
            onChange={(e) => set({ action: e.target.value, before: null })}
            aria-label="Action"
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
          >
            <option value="">every action</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <div className="ml-auto flex items-center gap-2" data-testid="audit-pages">
          <span className="text-muted">{filters.before ? 'older entries' : 'newest entries'}</span>
          <PageButton disabled={!filters.before} onClick={() => set({ before: null })}>
            Newest
          </PageButton>
          <PageButton disabled={!data.next} onClick={() => set({ before: data.next })}>
            Older
          </PageButton>
        </div>
      </div>
      {failed && (
        <p role="alert" className="text-sm text-red-600" data-testid="filter-error">
          {failed}
        </p>
      )}
      <div className="overflow-x-auto" hidden={Boolean(failed)}>
        <ListTable
          empty={data.entries.length === 0 && <p className="py-6 text-center text-sm text-muted">Nothing recorded.</p>}
          head={
            <>
              <th className="py-2 pr-3">When</th>
              <th className="pr-3">Who</th>
              <th className="pr-3">What</th>
              <th className="pr-3">Target</th>
              <th className="pr-3">Touched</th>
              <th className="pr-3">Reason</th>
              <th className="cell-optional pr-3">Result</th>
            </>
          }
        >
          {data.entries.map((e) => (
            <tr
              key={e.id}
              className="border-b border-zinc-100 align-top dark:border-zinc-900"
              data-testid="audit-entry"
            >
              <td className="py-2 pr-3 tabular-nums md:whitespace-nowrap">{utc(e.at)}</td>
              <td className="pr-3">{e.actor}</td>
              <td className="pr-3 font-mono wrap-anywhere">{e.action}</td>
              <td className="pr-3 font-mono text-xs wrap-anywhere">{e.target}</td>
              <td className="pr-3 text-xs break-words">
                <ul>
                  {touchedLinks(e).map((l) => (
                    <li key={l.href + l.label}>
                      <Link href={l.href} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
                        {l.label}
                      </Link>
                    </li>
                  ))}
                </ul>
              </td>
              <td className="pr-3">{e.reason ?? <span className="text-muted">—</span>}</td>
              <td className="cell-optional pr-3">{e.result}</td>
            </tr>
          ))}
        </ListTable>
      </div>
    </div>
  );
}
