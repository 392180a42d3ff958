import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { notFound } from '@/lib/broker/errors';
import { parseWith } from '@/lib/broker/validate';
import { containsText } from '@/lib/broker/text-match';
import { heldLongLease } from '@/lib/broker/leases';

export const QUEUE_SORTS = ['attention', 'partition', 'lag'] as const;

export const params = z.object({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(500).default(50),
  sort: z.enum(QUEUE_SORTS).default('attention'),
  group: z.string().optional(),
  partition: z.string().optional(),
  partitionIs: z.string().optional(),
});
export type QueuePageParams = z.output<typeof params>;

export type CursorRow = {
  partitionId: string;
  partition: string;
  group: string | null;
  head: number;
  committed: number;
  leaseEnd: number | null;
  lag: number;
  timeLagSeconds: number | null;
  leaseId: string | null;
  leaseState: 'live' | 'expired' | null;
  holder: string | null;
  acquiredAt: string | null;
  expiresAt: string | null;
  /** the lease duration its holder asked for */
  leaseSeconds: number | null;
  extensions: number;
  ackedInLease: number;
  deliveries: number;
  redeliveries: number;
  failures: number;
  /** the dead letters of this partition and group that exist now (not the counter of dead-letterings) */
  deadLetters: number;
  leaseExpiries: number;
  paused: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  pausedUntil: string | null;
  lastPushAt: string | null;
};

/** What bounds the queue's storage, what it holds, and what the lifecycle job's last run removed from it. */
export interface QueueStorage {
  retentionSeconds: number | null;
  completedRetentionSeconds: number | null;
  maxWaitTimeSeconds: number | null;
  maxSize: number | null;
  ttl: number | null;
  stored: number;
  bytes: number;
  lastRun: { at: string; deleted: number; evicted: number } | null;
}

export interface QueuePage {
  now: string;
  tookMs: number;
  queue: {
    name: string;
    namespace: string;
    task: string;
    leaseTime: number;
    partitions: number;
    groups: string[];
    storage: QueueStorage;
  };
  params: QueuePageParams;
  total: number;
  rows: CursorRow[];
}

export function parseQueuePageParams(search: URLSearchParams | Record<string, string | undefined>): QueuePageParams {
  const raw = search instanceof URLSearchParams ? Object.fromEntries(search) : search;
  return parseWith(
    params,
    Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== '')),
    'query',
  );
}

type Key = { pid: string; grp: string | null };

/**
 * The partitions the dashboard counts and lists: every one but an unused Default (configure creates
 * a Default partition whether it is used or not; nothing was ever pushed to it). The Overview's
 * figure, the queue page's count and its rows agree through these two. `p`: the alias of a
 * queen.partitions row.
 */
export const unusedDefault = (p: string) => sql.raw(`(${p}.name = 'Default' and ${p}.head_offset = 0)`);
/** `queen.queue_figures()`'s partitions of queue row `q` (figures `f`) without an unused Default. */
export const countedPartitions = (q: string, f: string) =>
  sql`(coalesce(${sql.raw(f)}.partitions, 0) - (select count(*) from queen.partitions dp
        where dp.queue_id = ${sql.raw(q)}.id and ${unusedDefault('dp')}))::int`;

/**
 * One row per (partition, group) of a queue, paged on the server: the cursor, the leased span,
 * the head, lags, the lease and the pause. Every page is found through indexes in proportion to
 * the page (and to the live leases and pauses): `attention` lists expired leases, leases held over
 * twice their own duration and paused cursors first, then the (partition, group) pairs whose
 * oldest pending message is oldest, then the rest by name; `lag` starts at the oldest pending;
 * `partition` is by name. The total is partitions × groups. Filters: `partition` keeps the names
 * containing it in any case (the text box), `partitionIs` the one partition of that name (links).
 */
export async function queuePage(name: string, p: QueuePageParams): Promise<QueuePage> {
  const started = performance.now();
  const head = await readDb().execute<{
    id: string;
    name: string;
    namespace: string;
    task: string;
    lease_time: number;
    partitions: number;
    groups: string[];
    now: string;
    storage: QueueStorage;
  }>(sql`
    select q.id, q.name, q.namespace, q.task, q.lease_time, queen.iso(now()) as now,
           ${countedPartitions('q', 'f')} as partitions,
           array(select g.consumer_group from queen.queue_groups g where g.queue_id = q.id order by g.consumer_group) as groups,
           json_build_object(
             'retentionSeconds', case when q.retention_enabled and q.retention_seconds > 0 then q.retention_seconds end,
             'completedRetentionSeconds', nullif(q.completed_retention_seconds, 0),
             'maxWaitTimeSeconds', nullif(q.max_wait_time_seconds, 0),
             'maxSize', nullif(q.max_size, 0), 'ttl', nullif(q.ttl, 0),
             'stored', coalesce(f.stored, 0), 'bytes', coalesce(f.bytes, 0),
             'lastRun', (select case when l.value->'queues' ? q.name
                                     then json_build_object('at', l.value->'at', 'deleted', (l.value->'queues'->q.name->>'deleted')::bigint,
                                                            'evicted', (l.value->'queues'->q.name->>'evicted')::bigint) end
                         from queen.system_state l where l.key = 'lifecycle')) as storage
    from queen.queues q
    left join queen.queue_figures() f on f.queue_id = q.id
    where q.name = ${name}`);
  if (head.rows.length === 0) throw notFound(`queue ${JSON.stringify(name)} not found`);
  const q = head.rows[0];
  const groups: (string | null)[] = p.group ? [p.group] : q.groups.length ? q.groups : [null];
  const named = groups.filter((g): g is string => g !== null);
  const need = p.page * p.pageSize;
  // `partition`: a substring in any case (the text box); `partitionIs`: that one partition (links)
  // an unused Default is listed only when a link names it
  const nameMatches = sql`${containsText(sql`p.name`, p.partition)} and (${p.partitionIs ?? null}::text is null or p.name = ${p.partitionIs ?? null})
    and (${p.partitionIs ?? null}::text is not null or not ${unusedDefault('p')})`;

  const partitionCount =
    !p.partition && p.partitionIs === undefined
      ? q.partitions
      : (
          await readDb().execute<{ n: number }>(sql`
        select count(*)::int as n from queen.partitions p where p.queue_id = ${q.id}::uuid and ${nameMatches}`)
        ).rows[0].n;

  const keys: Key[] = [];
  const seen = new Set<string>();
  const add = (rows: Key[]) => {
    for (const k of rows) {
      const id = `${k.pid}/${k.grp}`;
      if (!seen.has(id)) {
        seen.add(id);
        keys.push(k);
      }
    }
  };
  if (p.sort === 'attention' && named.length) {
    add(
      (
        await readDb().execute<Key>(sql`
      select c.partition_id as pid, c.consumer_group as grp from (
        select c.partition_id, c.consumer_group,
               case when c.lease_expires_at <= now() then 0 else 1 end as rank, c.lease_expires_at as at
        from queen.cursors c
        join queen.queues q on q.id = c.queue_id
        where c.queue_id = ${q.id}::uuid and c.lease_id is not null and c.consumer_group = any (${sql.param(named)}::text[])
          and (c.lease_expires_at <= now() or ${heldLongLease})
        union all
        select c.partition_id, c.consumer_group, 2, c.paused_at
        from queen.cursors c
        where c.queue_id = ${q.id}::uuid and c.paused and (c.paused_until is null or c.paused_until > now())
          and c.consumer_group = any (${sql.param(named)}::text[])
      ) c
      join queen.partitions p on p.id = c.partition_id
      where ${nameMatches}
      order by c.rank, c.at, p.name, c.consumer_group`)
      ).rows,
    );
  }
  if ((p.sort === 'attention' || p.sort === 'lag') && named.length && keys.length < need) {
    add(
      (
        await readDb().execute<Key>(sql`
      select b.partition_id as pid, g.grp
      from unnest(${sql.param(named)}::text[]) as g(grp)
      cross join lateral (
        select b.partition_id, b.pending_since
        from queen.backlog b join queen.partitions p on p.id = b.partition_id
        where (b.queue_id::text || '/' || b.consumer_group) = (${q.id}::text || '/' || g.grp) and ${nameMatches}
        order by b.pending_since
        limit ${need}) b
      order by b.pending_since, b.partition_id, g.grp`)
      ).rows,
    );
  }
  if (keys.length < need) {
    // The rest by name: pairs with nothing pending (or every pair, sorted by partition).
    const skipPending = p.sort !== 'partition' && named.length > 0;
    add(
      (
        await readDb().execute<Key>(sql`
      select p.id as pid, g.grp
      from (select p.id, p.name from queen.partitions p
            where p.queue_id = ${q.id}::uuid and ${nameMatches}
            order by p.name) p
      cross join unnest(${sql.param(groups)}::text[]) with ordinality as g(grp, o)
      where not ${skipPending} or not exists (
        select 1 from queen.backlog b where b.partition_id = p.id and b.consumer_group = g.grp)
      order by p.name, g.o
      limit ${need + seen.size}`)
      ).rows,
    );
  }
  const pageKeys = keys.slice((p.page - 1) * p.pageSize, need);

  const { rows } = await readDb().execute<CursorRow>(sql`
    select p.id as "partitionId", p.name as partition, k.grp as group, p.head_offset::float8 as head,
           coalesce(c.committed_offset, 0)::float8 as committed, c.lease_end_offset::float8 as "leaseEnd",
           greatest(p.head_offset - coalesce(c.committed_offset, 0), 0)::float8 as lag,
           case when p.head_offset > coalesce(c.committed_offset, 0)
                then extract(epoch from now() - coalesce(b.pending_since, queen.pending_since(p.id, coalesce(c.committed_offset, 0))))::float8
           end as "timeLagSeconds",
           c.lease_id as "leaseId",
           case when c.lease_id is null then null when c.lease_expires_at > now() then 'live' else 'expired' end as "leaseState",
           c.lease_holder as holder, queen.iso(c.lease_acquired_at) as "acquiredAt", queen.iso(c.lease_expires_at) as "expiresAt",
           c.lease_seconds as "leaseSeconds",
           coalesce(c.lease_extensions, 0) as extensions, coalesce(cardinality(c.acked_offsets), 0) as "ackedInLease",
           coalesce(c.deliveries, 0)::float8 as deliveries, coalesce(c.redeliveries, 0)::float8 as redeliveries,
           coalesce(c.failures, 0)::float8 as failures, (select count(*) from queen.dead_letters d where d.partition_id = k.pid and d.consumer_group = k.grp)::float8 as "deadLetters",
           coalesce(c.lease_expiries, 0)::float8 as "leaseExpiries",
           coalesce(c.paused and (c.paused_until is null or c.paused_until > now()), false) as paused,
           c.paused_reason as "pausedReason", c.paused_by as "pausedBy", queen.iso(c.paused_until) as "pausedUntil",
           queen.iso(p.last_push_at) as "lastPushAt"
    from unnest(${sql.param(pageKeys.map((k) => k.pid))}::uuid[], ${sql.param(pageKeys.map((k) => k.grp))}::text[]) with ordinality as k(pid, grp, ord)
    join queen.partitions p on p.id = k.pid
    left join queen.cursors c on c.partition_id = k.pid and c.consumer_group = k.grp
    left join queen.backlog b on b.partition_id = k.pid and b.consumer_group = k.grp
    order by k.ord`);
  return {
    now: q.now,
    tookMs: Math.round(performance.now() - started),
    queue: {
      name: q.name,
      namespace: q.namespace,
      task: q.task,
      leaseTime: q.lease_time,
      partitions: q.partitions,
      groups: q.groups,
      storage: q.storage,
    },
    params: p,
    total: partitionCount * groups.length,
    rows,
  };
}
