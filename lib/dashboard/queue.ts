import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { notFound } from '@/lib/http/errors';
import { parseWith } from '@/lib/http/validate';

export const QUEUE_SORTS = ['attention', 'partition', 'lag'] as const;

const params = z.object({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(500).default(50),
  sort: z.enum(QUEUE_SORTS).default('attention'),
  group: z.string().optional(),
  partition: z.string().optional(),
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
  extensions: number;
  ackedInLease: number;
  deliveries: number;
  redeliveries: number;
  failures: number;
  deadLetters: number;
  leaseExpiries: number;
  paused: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  pausedUntil: string | null;
  lastPushAt: string | null;
};

export interface QueuePage {
  now: string;
  tookMs: number;
  queue: { name: string; namespace: string; task: string; leaseTime: number; partitions: number; groups: string[] };
  params: QueuePageParams;
  total: number;
  rows: CursorRow[];
}

export function parseQueuePageParams(search: URLSearchParams | Record<string, string | undefined>): QueuePageParams {
  const raw = search instanceof URLSearchParams ? Object.fromEntries(search) : search;
  return parseWith(params, Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== '')), 'query');
}

/**
 * One row per (partition, group) of a queue, paged on the server: the cursor, the leased span,
 * the head, lags, the lease and the pause. `attention` puts what needs an operator first:
 * expired leases, leases held too long, paused cursors, then the largest lag.
 */
export async function queuePage(name: string, p: QueuePageParams): Promise<QueuePage> {
  const started = performance.now();
  const head = await db().execute<{ id: string; name: string; namespace: string; task: string; lease_time: number; partitions: number; groups: string[] }>(sql`
    select q.id, q.name, q.namespace, q.task, q.lease_time,
           (select count(*)::int from queen.partitions p where p.queue_id = q.id) as partitions,
           coalesce((select array_agg(distinct c.consumer_group order by c.consumer_group) from queen.cursors c
                     join queen.partitions p on p.id = c.partition_id where p.queue_id = q.id), '{}') as groups
    from queen.queues q where q.name = ${name}`);
  if (head.rows.length === 0) throw notFound(`queue ${JSON.stringify(name)} not found`);
  const q = head.rows[0];
  const groups = p.group ? [p.group] : q.groups;
  const order =
    p.sort === 'partition' ? sql`r.partition, r.grp`
    : p.sort === 'lag' ? sql`r.lag desc, r.partition, r.grp`
    : sql`r.expired desc, r.held_long desc, r.live_pause desc, r.lag desc, r.partition, r.grp`;
  const { rows } = await db().execute<CursorRow & { total: number }>(sql`
    with r as (
      select p.id as pid, p.name as partition, p.head_offset, p.last_push_at, g.grp, c.*,
             greatest(p.head_offset - coalesce(c.committed_offset, 0), 0) as lag,
             coalesce(c.lease_id is not null and c.lease_expires_at <= now(), false) as expired,
             coalesce(c.lease_expires_at > now() and c.lease_acquired_at < now() - make_interval(secs => 2 * ${q.lease_time}::int), false) as held_long,
             coalesce(c.paused and (c.paused_until is null or c.paused_until > now()), false) as live_pause
      from queen.partitions p
      left join unnest(${sql.param(groups)}::text[]) as g(grp) on true
      left join queen.cursors c on c.partition_id = p.id and c.consumer_group = g.grp
      where p.queue_id = ${q.id}::uuid
        and (${p.partition ?? null}::text is null or p.name ilike '%' || ${p.partition ?? null} || '%')
    ),
    page as (
      select r.*, count(*) over () as total from r
      order by ${order}
      limit ${p.pageSize} offset ${(p.page - 1) * p.pageSize}
    )
    select r.pid as "partitionId", r.partition, r.grp as group, r.head_offset::float8 as head,
           coalesce(r.committed_offset, 0)::float8 as committed, r.lease_end_offset::float8 as "leaseEnd", r.lag::float8 as lag,
           extract(epoch from now() - (select s.created_at from queen.segments s
                                       where s.partition_id = r.pid and s.last_offset > coalesce(r.committed_offset, 0)
                                       order by s.first_offset limit 1))::float8 as "timeLagSeconds",
           r.lease_id as "leaseId",
           case when r.lease_id is null then null when r.lease_expires_at > now() then 'live' else 'expired' end as "leaseState",
           r.lease_holder as holder, queen.iso(r.lease_acquired_at) as "acquiredAt", queen.iso(r.lease_expires_at) as "expiresAt",
           coalesce(r.lease_extensions, 0) as extensions, coalesce(cardinality(r.acked_offsets), 0) as "ackedInLease",
           coalesce(r.deliveries, 0)::float8 as deliveries, coalesce(r.redeliveries, 0)::float8 as redeliveries,
           coalesce(r.failures, 0)::float8 as failures, coalesce(r.dead_letters, 0)::float8 as "deadLetters",
           coalesce(r.lease_expiries, 0)::float8 as "leaseExpiries", r.live_pause as paused,
           r.paused_reason as "pausedReason", r.paused_by as "pausedBy", queen.iso(r.paused_until) as "pausedUntil",
           queen.iso(r.last_push_at) as "lastPushAt", r.total::int as total
    from page r
    order by ${order}`);
  const now = await db().execute<{ now: string }>(sql`select queen.iso(now()) as now`);
  return {
    now: now.rows[0].now,
    tookMs: Math.round(performance.now() - started),
    queue: { name: q.name, namespace: q.namespace, task: q.task, leaseTime: q.lease_time, partitions: q.partitions, groups: q.groups },
    params: p,
    total: rows[0]?.total ?? 0,
    rows: rows.map(({ total: _total, ...row }) => row),
  };
}
