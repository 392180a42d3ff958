import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { notFound } from '@/lib/http/errors';
import { parseWith, queryInteger, reasonText } from '@/lib/http/validate';
import { isUuid } from '@/lib/uuid';
import { wakeLocal } from './waiters';
import { retryingConflicts } from './conflicts';
import { containsText } from './text-match';

export const extendBody = z.object({ seconds: z.number().int().min(1).max(86400 * 7).optional() }).optional();


export async function extendLease(leaseId: string, body: unknown) {
  const seconds = parseWith(extendBody, body ?? undefined)?.seconds ?? 60;
  if (!isUuid(leaseId)) return [{ index: 0, leaseId, success: false, error: 'Lease not found', expiresAt: null }];
  const { rows } = await retryingConflicts(() =>
    db().execute<{ success: boolean; error: string | null; expires_at: string | null }>(
      sql`select * from queen.extend_lease(${leaseId}::uuid, ${seconds}::integer)`,
    ),
  );
  const r = rows[0];
  return [{ index: 0, leaseId, success: r.success, error: r.error, expiresAt: r.expires_at }];
}

export type Lease = {
  leaseId: string;
  queue: string;
  partition: string;
  partitionId: string;
  consumerGroup: string;
  state: 'live' | 'expired';
  span: { from: number; to: number; size: number };
  acked: number;
  holder: string | null;
  acquiredAt: string;
  expiresAt: string;
  extensions: number;
  firstOffsetDeliveries: number;
  /** the duration its holder asked for (leaseSeconds, else the queue's leaseTime) */
  leaseSeconds: number;
  heldSeconds: number;
  expiresInSeconds: number;
};

export interface LeaseList {
  now: string;
  /** leases matching the filters, on every page */
  total: number;
  leases: Lease[];
}

export const LEASE_STATES = ['live', 'expiring', 'expired', 'held-long', 'redelivered', 'stuck'] as const;
export const LEASE_SORTS = ['expiry', 'held', 'deliveries'] as const;

export const listFilters = z.object({
  queue: z.string().optional(),
  group: z.string().optional(),
  holder: z.string().optional(),
  state: z.enum(LEASE_STATES).optional(),
  minDeliveries: queryInteger().optional(),
  sort: z.enum(LEASE_SORTS).optional(),
  page: queryInteger(1).optional(),
  pageSize: queryInteger(1, 1000).optional(),
});

/**
 * Leases (one per (partition, group) at most), live or expired but not yet reclaimed, filtered,
 * sorted and paged in one statement; without `pageSize`, every matching lease. States: `live`;
 * `expiring` (live, under 10 s left); `expired` (not yet reclaimed); `held-long` (live, held more
 * than twice the duration its holder asked for, extensions included); `redelivered` (first offset
 * delivered more than `minDeliveries` times, default 3); `stuck` (live and held-long or
 * redelivered). Sorts: `expiry` (soonest first, the default), `held` (longest held first),
 * `deliveries` (most delivered first offset first).
 */
export async function listLeases(search: URLSearchParams): Promise<LeaseList> {
  const f = parseWith(listFilters, Object.fromEntries(search), 'query');
  const minDeliveries = f.minDeliveries ?? 3;
  const order =
    f.sort === 'held' ? sql`l."heldSeconds" desc, l."leaseId"`
    : f.sort === 'deliveries' ? sql`l."firstOffsetDeliveries" desc, l."expiresAt", l."leaseId"`
    : sql`l."expiresAt", l."leaseId", l."partitionId"`;
  const page = f.pageSize === undefined ? sql`` : sql`limit ${f.pageSize} offset ${((f.page ?? 1) - 1) * f.pageSize}`;
  const { rows } = await db().execute<{ now: string; total: number; leases: Lease[] | null }>(sql`
    with l as (
      select * from (
      select c.lease_id as "leaseId", q.name as queue, p.name as partition, c.partition_id as "partitionId",
             c.consumer_group as "consumerGroup",
             case when c.lease_expires_at > now() then 'live' else 'expired' end as state,
             json_build_object('from', c.committed_offset + 1, 'to', c.lease_end_offset,
                               'size', c.lease_end_offset - c.committed_offset) as span,
             cardinality(c.acked_offsets) as acked,
             c.lease_holder as holder, queen.iso(c.lease_acquired_at) as "acquiredAt",
             queen.iso(c.lease_expires_at) as "expiresAt", c.lease_extensions as extensions,
             coalesce(a.deliveries, 1) as "firstOffsetDeliveries", coalesce(c.lease_seconds, q.lease_time) as "leaseSeconds",
             extract(epoch from now() - c.lease_acquired_at)::float8 as "heldSeconds",
             extract(epoch from c.lease_expires_at - now())::float8 as "expiresInSeconds"
      from queen.cursors c
      join queen.partitions p on p.id = c.partition_id
      join queen.queues q on q.id = c.queue_id
      left join queen.message_attempts a
        on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = c.committed_offset + 1
      where c.lease_id is not null
        and (${f.queue ?? null}::text is null or q.name = ${f.queue ?? null})
        and (${f.group ?? null}::text is null or c.consumer_group = ${f.group ?? null})
        and ${containsText(sql`c.lease_holder`, f.holder)}
    ) l
    where case ${f.state ?? 'all'}::text
      when 'all' then true
      when 'live' then l.state = 'live'
      when 'expired' then l.state = 'expired'
      when 'expiring' then l.state = 'live' and l."expiresInSeconds" <= 10
      when 'held-long' then l.state = 'live' and l."heldSeconds" > 2 * l."leaseSeconds"
      when 'redelivered' then l."firstOffsetDeliveries" > ${minDeliveries}
      when 'stuck' then l.state = 'live' and (l."heldSeconds" > 2 * l."leaseSeconds" or l."firstOffsetDeliveries" > ${minDeliveries})
    end)
    select queen.iso(now()) as now, (select count(*)::int from l) as total,
           (select json_agg(p) from (select * from l order by ${order} ${page}) p) as leases`);
  const r = rows[0];
  return { now: r.now, total: r.total, leases: r.leases ?? [] };
}

export const releaseBody = z.object({ reason: reasonText }).optional();

/** Operator force release: the lease ends now and acks carrying its id are refused. */
export async function releaseLease(leaseId: string, body: unknown, actor: string) {
  const { reason } = parseWith(releaseBody, body ?? undefined) ?? {};
  if (!isUuid(leaseId)) throw notFound('lease not found');
  const { rows } = await retryingConflicts(() =>
    db().execute<{ partition_id: string; consumer_group: string; queue_name: string; partition_name: string }>(
      sql`select * from queen.release_lease(${leaseId}::uuid, ${reason ?? null}, ${actor})`,
    ),
  );
  if (rows.length === 0) throw notFound('lease not found');
  wakeLocal([...new Set(rows.map((r) => r.queue_name))]);
  return {
    released: true,
    leaseId,
    partitions: rows.map((r) => ({ partitionId: r.partition_id, consumerGroup: r.consumer_group, queue: r.queue_name, partition: r.partition_name })),
  };
}
