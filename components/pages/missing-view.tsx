'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { count, plural, utc } from '@/lib/dashboard/format';
import { auditHref, queueHref } from '@/lib/dashboard/links';
import { isUuid } from '@/lib/uuid';
import { ApiError } from '../api';
import { SearchBox } from '../search-box';
import { type AuditEntry, readAudit } from '../client/audit';
import { readQueue } from '../client/queues';

export type MissingKind = 'queue' | 'partition' | 'message' | 'offset';

/** An audit entry, whose `details` this page reads by action. */
type TrailEntry = Omit<AuditEntry, 'details'> & { details: Record<string, any> };

/** What the path names, and the words for what is missing. */
function missing(kind: MissingKind, path: string) {
  const seg = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (kind === 'queue' || kind === 'partition') {
    const [, queue, , partition] = seg;
    return { queue, partition, search: kind === 'queue' ? queue : partition, audit: auditHref({ queue }) };
  }
  const [, partitionId, third, fourth] = seg;
  const malformed = !isUuid(partitionId);
  const offset = kind === 'offset' ? fourth : undefined;
  const transactionId = kind === 'message' ? third : undefined;
  return {
    partitionId,
    malformed,
    offset,
    badOffset: offset !== undefined && !/^\d{1,15}$/.test(offset),
    transactionId,
    search: transactionId ?? partitionId,
    audit: malformed
      ? auditHref({})
      : transactionId
        ? auditHref({ target: `${partitionId}/${transactionId}` })
        : auditHref({ partitionId }),
  };
}

/**
 * A dashboard object that is not there (a not-found page): says which one and why it may be gone,
 * lists what the audit log says of it (a deleted queue: who, when, why and what went with it), and
 * offers the search and the audit.
 */
export function MissingView({ kind }: { kind: MissingKind }) {
  const path = usePathname();
  const m = missing(kind, path);
  const auditQuery =
    kind === 'queue' || kind === 'partition'
      ? `queue=${encodeURIComponent(m.queue ?? '')}`
      : m.partitionId && !m.malformed
        ? `partitionId=${m.partitionId}`
        : null;
  const trail = useQuery({
    queryKey: ['missing-audit', auditQuery],
    enabled: auditQuery !== null,
    queryFn: () => readAudit(`${auditQuery}&limit=10`) as Promise<{ entries: TrailEntry[] }>,
  });
  const queueThere = useQuery({
    queryKey: ['missing-queue', m.queue],
    enabled: kind === 'partition',
    queryFn: () =>
      readQueue(m.queue ?? '').then(
        () => true,
        (e) => (e instanceof ApiError && e.status === 404 ? false : Promise.reject(e)),
      ),
  });
  return (
    <div className="space-y-4" data-testid="not-found">
      <h1 className="text-2xl font-semibold">{title(kind, m)}</h1>
      <p className="text-sm" data-testid="not-found-what">
        {what(kind, m, queueThere.data)}
      </p>
      <section className="space-y-2">
        <h2 className="text-lg font-semibold">What the audit log says</h2>
        {auditQuery === null ? (
          <p className="text-sm text-muted">A malformed id names nothing the audit log could hold.</p>
        ) : trail.isPending ? (
          <p className="text-sm text-muted">Reading the audit log…</p>
        ) : trail.error ? (
          <p role="alert" className="text-sm text-red-700 dark:text-red-400">
            The audit log could not be read: {(trail.error as Error).message}
          </p>
        ) : trail.data.entries.length === 0 ? (
          <p className="text-sm text-muted" data-testid="not-found-no-audit">
            No operator action on it is recorded: it may never have existed under this name, or its entries are past the
            audit retention.
          </p>
        ) : (
          <ul className="space-y-2 text-sm">
            {trail.data.entries.map((e) => (
              <li
                key={e.id}
                className="rounded border border-zinc-200 p-2 dark:border-zinc-800"
                data-testid="not-found-audit"
              >
                <span className="font-mono">{e.action}</span> by <strong>{e.actor}</strong> at {utc(e.at)}
                {e.reason ? <> — “{e.reason}”</> : null}
                {e.action === 'queue.delete' && e.details.removed ? <Removed removed={e.details.removed} /> : null}
                {e.action === 'queue.configure' && e.details.changed?.length ? (
                  <div className="text-muted">changed: {e.details.changed.join(', ')}</div>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="flex flex-wrap items-center gap-3 text-sm">
        <SearchBox initial={m.search ?? ''} label="Search again" />
        <Link href={m.audit} className="text-sky-700 hover:underline dark:text-sky-400">
          Every audit entry of it
        </Link>
        {kind === 'partition' && queueThere.data ? (
          <Link href={queueHref(m.queue ?? '')} className="text-sky-700 hover:underline dark:text-sky-400">
            Queue {m.queue}
          </Link>
        ) : null}
        <Link href="/" className="text-sky-700 hover:underline dark:text-sky-400">
          Overview (every queue)
        </Link>
      </section>
    </div>
  );
}

type Missing = ReturnType<typeof missing>;

function title(kind: MissingKind, m: Missing) {
  if (kind === 'queue') return `No queue named ${m.queue}`;
  if (kind === 'partition') return `No partition ${m.partition} in queue ${m.queue}`;
  if (m.malformed) return `${m.partitionId} is not a partition id`;
  if (kind === 'offset') return m.badOffset ? `${m.offset} is not an offset` : `No message at offset ${m.offset}`;
  return `No message ${m.transactionId}`;
}

function what(kind: MissingKind, m: Missing, queueExists: boolean | undefined) {
  if (kind === 'queue')
    return `The queue ${m.queue} does not exist: it was deleted, never created, or the name is misspelt (names match exactly).`;
  if (kind === 'partition')
    return queueExists === false
      ? `The queue ${m.queue} does not exist, so neither does its partition ${m.partition}.`
      : `The queue ${m.queue} has no partition named ${m.partition}: a partition exists once something was pushed to it (names match exactly).`;
  if (m.malformed)
    return `A partition id is a UUID (the queue page and the Message page link them); ${m.partitionId} is not one.`;
  if (kind === 'offset' && m.badOffset) return `An offset is a whole number from 1; ${m.offset} is not one.`;
  return kind === 'offset'
    ? `Partition ${m.partitionId} holds no message at offset ${m.offset}: not pushed yet, deleted, or removed by retention.`
    : `Partition ${m.partitionId} holds no message with transaction id ${m.transactionId}: it was deleted, removed by retention, pushed to another partition, or the partition is gone.`;
}

function Removed({ removed: r }: { removed: Record<string, any> }) {
  const groups = (r.groups ?? []) as { group: string; lag: number }[];
  return (
    <div className="text-muted" data-testid="not-found-removed">
      removed {plural(r.partitions, 'partition')}, {plural(r.messages, 'message')},{' '}
      {plural(r.deadLetters, 'dead letter')}, {plural(r.liveLeases, 'lease')} held
      {groups.length
        ? `; groups ${groups.map((g) => `${g.group} (lag ${count(g.lag)})`).join(', ')}`
        : '; no consumer group'}
    </div>
  );
}
