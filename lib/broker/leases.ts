import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { notFound } from './errors';
import { parseWith, queryInteger, reasonText } from './validate';
import { wakeLocal } from './waiters';
import { retryingConflicts } from './conflicts';
import { containsText } from './text-match';

export const extendBody = z
  .object({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(86400 * 7)
      .optional(),
  })
  .optional();

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
  /** with auth on, the subject of the token that took the lease (the holder is the consumer's own word) */
  subject: string | null;
  acquiredAt: string;
  expiresAt: string;
  extensions: number;
  firstOffsetDeliveries: number;
  /** the duration its holder asked for (leaseSeconds, else the queue's leaseTime) */
  leaseSeconds: number;
  /** from acquisition to now, or to the expiry once expired */
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
  lease: z.string().refine(isUuid, 'lease must be a lease id (a UUID)').optional(),
  queue: z.string().optional(),
  group: z.string().optional(),
  holder: z.string().optional(),
  holderIs: z.string().optional(),
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
 * delivered more than `minDeliveries` times, default 3); `stuck` (past its current expiry and not
 * reclaimed, or redelivered: see `stuckLease`). `holder` matches a substring in any case (the
 * page's text box), `holderIs` one holder exactly (the links of the Consumers page). `lease` keeps the rows of one lease id (a
 * multi-partition pop holds one id over several partitions). Sorts: `expiry` (soonest first, the default), `held` (longest held first),
 * `deliveries` (most delivered first offset first).
 */
export async function listLeases(search: URLSearchParams): Promise<LeaseList> {
  const f = parseWith(listFilters, Object.fromEntries(search), 'query');
  const minDeliveries = f.minDeliveries ?? DEFAULT_MIN_DELIVERIES;
  const order =
    f.sort === 'held'
      ? sql`l."heldSeconds" desc, l."leaseId"`
      : f.sort === 'deliveries'
        ? sql`l."firstOffsetDeliveries" desc, l."expiresAt", l."leaseId"`
        : sql`l."expiresAt", l."leaseId", l."partitionId"`;
  const page = f.pageSize === undefined ? sql`` : sql`limit ${f.pageSize} offset ${((f.page ?? 1) - 1) * f.pageSize}`;
  const { rows } = await db().execute<{ now: string; total: number; leases: Lease[] | null }>(sql`
    with l as (
      select c.lease_id as "leaseId", q.name as queue, p.name as partition, c.partition_id as "partitionId",
             c.consumer_group as "consumerGroup",
             case when c.lease_expires_at > now() then 'live' else 'expired' end as state,
             json_build_object('from', c.committed_offset + 1, 'to', c.lease_end_offset,
                               'size', c.lease_end_offset - c.committed_offset) as span,
             cardinality(c.acked_offsets) as acked,
             c.lease_holder as holder, s.subject, queen.iso(c.lease_acquired_at) as "acquiredAt",
             queen.iso(c.lease_expires_at) as "expiresAt", c.lease_extensions as extensions,
             coalesce(a.deliveries, 1) as "firstOffsetDeliveries", coalesce(c.lease_seconds, q.lease_time) as "leaseSeconds",
             -- an expired lease is no longer held: its time stops at the expiry
             extract(epoch from least(now(), c.lease_expires_at) - c.lease_acquired_at)::float8 as "heldSeconds",
             extract(epoch from c.lease_expires_at - now())::float8 as "expiresInSeconds"
      from queen.cursors c
      join queen.partitions p on p.id = c.partition_id
      join queen.queues q on q.id = c.queue_id
      left join queen.lease_subjects s on s.partition_id = c.partition_id and s.consumer_group = c.consumer_group and s.lease_id = c.lease_id
      ${firstOffsetAttempts}
      where c.lease_id is not null
        and (${f.lease ?? null}::uuid is null or c.lease_id = ${f.lease ?? null}::uuid)
        and (${f.queue ?? null}::text is null or q.name = ${f.queue ?? null})
        and (${f.group ?? null}::text is null or c.consumer_group = ${f.group ?? null})
        and ${containsText(sql`c.lease_holder`, f.holder)}
        and (${f.holderIs ?? null}::text is null or c.lease_holder = ${f.holderIs ?? null})
        and case ${f.state ?? 'all'}::text
          when 'all' then true
          when 'live' then c.lease_expires_at > now()
          when 'expired' then c.lease_expires_at <= now()
          when 'expiring' then c.lease_expires_at > now() and c.lease_expires_at <= now() + interval '10 seconds'
          when 'held-long' then ${heldLongLease}
          when 'redelivered' then ${redeliveredLease(minDeliveries)}
          when 'stuck' then ${stuckLease(minDeliveries)}
        end)
    select queen.iso(now()) as now, (select count(*)::int from l) as total,
           (select json_agg(p) from (select * from l order by ${order} ${page}) p) as leases`);
  const r = rows[0];
  return { now: r.now, total: r.total, leases: r.leases ?? [] };
}

/** Deliveries of a lease's first offset above which it counts as redelivered (and stuck). */
export const DEFAULT_MIN_DELIVERIES = 3;

/**
 * The `held-long` state over a cursor `c` holding a lease and its queue `q`: live, and held over
 * twice the duration its holder asked for (else the queue's), which only extensions allow. The
 * leases page and the queue page's attention order use it; it is not `stuck` (an extended lease's
 * holder said it is at work).
 */
export const heldLongLease = sql`(
  c.lease_expires_at > now()
  and c.lease_acquired_at < now() - make_interval(secs => 2 * coalesce(c.lease_seconds, q.lease_time)))`;

/** The `redelivered` state over a leased cursor's first offset's attempts `a` (left joined). */
const redeliveredLease = (minDeliveries: number) => sql`coalesce(a.deliveries, 1) > ${minDeliveries}`;

/**
 * The `stuck` state over a cursor `c` holding a lease, its queue `q` and the first offset's
 * attempts `a` (left joined): past its current expiry (extensions included) and not reclaimed, or
 * its first offset delivered more than `minDeliveries` times. A lease held long is not stuck by
 * that alone: a live lease outlives the duration it asked for only by being extended, which is its
 * holder saying it is still at work. The leases page and the overview both count with it, so their
 * figures agree.
 */
export const stuckLease = (minDeliveries = DEFAULT_MIN_DELIVERIES) => sql`(
  c.lease_expires_at <= now() or ${redeliveredLease(minDeliveries)})`;

/** The attempts row of a leased cursor's first offset, for `stuckLease`. */
export const firstOffsetAttempts = sql`left join queen.message_attempts a
  on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = c.committed_offset + 1`;

export const releaseBody = z.object({ reason: reasonText }).optional();

export type ReleasedPartition = {
  partitionId: string;
  consumerGroup: string;
  queue: string;
  partition: string;
  /** the offsets the lease held, now claimable again */
  span: { from: number; to: number };
  holder: string | null;
  /** it had expired already, not yet reclaimed */
  expired: boolean;
};

/**
 * Operator force release of the whole lease: every partition a multi-partition pop claimed under
 * this id is released at once (the consumer's lease is one unit), and each is listed with its span.
 * Acks carrying the id are refused from then on.
 */
export async function releaseLease(leaseId: string, body: unknown, actor: string) {
  const { reason } = parseWith(releaseBody, body ?? undefined) ?? {};
  if (!isUuid(leaseId)) throw notFound('lease not found');
  const { rows } = await retryingConflicts(() =>
    db().execute<{
      partition_id: string;
      consumer_group: string;
      queue_name: string;
      partition_name: string;
      span_from: string;
      span_to: string;
      holder: string | null;
      expired: boolean;
    }>(sql`select * from queen.release_lease(${leaseId}::uuid, ${reason ?? null}, ${actor})`),
  );
  if (rows.length === 0) throw notFound('lease not found');
  wakeLocal([...new Set(rows.map((r) => r.queue_name))]);
  const partitions: ReleasedPartition[] = rows.map((r) => ({
    partitionId: r.partition_id,
    consumerGroup: r.consumer_group,
    queue: r.queue_name,
    partition: r.partition_name,
    span: { from: Number(r.span_from), to: Number(r.span_to) },
    holder: r.holder,
    expired: r.expired,
  }));
  return { released: true, leaseId, partitions };
}

/** At most this many lease ids in one bulk release (a page of the Leases page holds fewer). */
export const MAX_BULK_RELEASE = 1000;

export const bulkReleaseBody = z
  .object({
    leaseIds: z
      .array(z.string().refine(isUuid, 'must be a lease id (a UUID)'))
      .min(1, 'must name at least one lease')
      .max(MAX_BULK_RELEASE, `must name at most ${MAX_BULK_RELEASE} leases`),
    reason: reasonText,
  })
  .strict()
  .refine((b) => (b.reason ?? '').trim() !== '', {
    message: 'must say why (it goes to the audit log)',
    path: ['reason'],
  });

export interface BulkReleaseResult {
  leaseId: string;
  released: boolean;
  /** why not: the lease ended meanwhile (acked, released, reclaimed) */
  error: string | null;
  partitions: ReleasedPartition[];
}

/**
 * Releases the leases named, each as one force release (its own fence, one reason for all), in one
 * transaction with one audit entry for the action that lists them all: what the operator confirmed
 * is exactly what is released, never a lease its holder took after the list was shown. A lease that
 * ended meanwhile is answered as not released and writes nothing.
 */
export async function releaseLeases(body: unknown, actor: string) {
  const { leaseIds, reason } = parseWith(bulkReleaseBody, body);
  const ids = [...new Set(leaseIds)];
  const { rows } = await retryingConflicts(() =>
    db().execute<{ lease_id: string; released: ReleasedRow[] | null }>(
      sql`select * from queen.release_leases(${sql.param(ids)}::uuid[], ${reason!.trim()}, ${actor})`,
    ),
  );
  const byId = new Map(rows.map((r) => [r.lease_id, r.released]));
  wakeLocal([...new Set(rows.flatMap((r) => (r.released ?? []).map((p) => p.queue)))]);
  const results: BulkReleaseResult[] = ids.map((leaseId) => {
    const released = byId.get(leaseId);
    return released
      ? {
          leaseId,
          released: true,
          error: null,
          partitions: released.map((p) => ({
            partitionId: p.partitionId,
            consumerGroup: p.group,
            queue: p.queue,
            partition: p.partition,
            span: { from: p.from, to: p.to },
            holder: p.holder,
            expired: p.expired,
          })),
        }
      : { leaseId, released: false, error: 'Lease not found', partitions: [] };
  });
  return { released: results.filter((r) => r.released).length, results };
}

/** A row queen.end_lease freed. */
interface ReleasedRow {
  partitionId: string;
  group: string;
  queue: string;
  partition: string;
  from: number;
  to: number;
  holder: string | null;
  expired: boolean;
}
