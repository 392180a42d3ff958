import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { isoTimestamp, name, parseWith } from '@/lib/broker/validate';

/** At most this many partitions are counted per call (the Live page's table shows the most recent). */
export const MAX_ACTIVITY_PARTITIONS = 200;

export const activityQuery = z.object({
  since: isoTimestamp,
  /** JSON: [[queue, partition], ...] (names: the live events carry them; a push event carries no partition id) */
  partitions: z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: [[queue, partition], ...]' });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(z.tuple([name, name]))
        .max(MAX_ACTIVITY_PARTITIONS, `must name at most ${MAX_ACTIVITY_PARTITIONS} partitions`),
    ),
  group: name.optional(),
});

export interface PartitionActivity {
  partitionId: string;
  queue: string;
  partition: string;
  /** messages pushed since (its segments' sizes) */
  pushed: number;
  /** messages in the spans claimed since */
  claimed: number;
  /** messages in those spans whose lease ended acked (or autoAck) */
  acked: number;
  /** of those leases, the ones ended by a failed ack */
  failed: number;
  /** of those leases, the ones that expired (reclaimed after, or past their expiry now) */
  expired: number;
}

/**
 * What happened on these partitions since `since`, counted by the database (segments, and the
 * deliveries of sql/024), not from the events a page happened to receive: each read is one index
 * range per partition bounded by the time.
 */
/** A claim of the last minutes, for a Live page that just opened: its feed starts with history. */
export interface RecentClaim {
  type: 'claim';
  at: string;
  earlier: true;
  group: string;
  holder: string | null;
  leaseId: string | null;
  /** a claim without a lease (autoAck pop) */
  autoAck: boolean;
  partitions: { queue: string; partition: string; partitionId: string; count: number }[];
  ended: string | null;
}

/** How far back a Live page's history goes, and how many claims it shows. */
export const RECENT_MINUTES = 10;
export const RECENT_CLAIMS = 50;

export async function activity(
  search: URLSearchParams,
): Promise<{ now: string; since: string; partitions: PartitionActivity[] }> {
  const f = parseWith(activityQuery, Object.fromEntries(search), 'query');
  const queues = f.partitions.map((k) => k[0]);
  const names = f.partitions.map((k) => k[1]);
  const since = new Date(f.since).toISOString();
  const group = f.group ?? null;
  const { rows } = await readDb().execute<{ now: string; partitions: PartitionActivity[] | null }>(sql`
    select queen.iso(now()) as now, (
      select json_agg(json_build_object('partitionId', p.id, 'queue', q.name, 'partition', p.name,
               'pushed', coalesce(s.n, 0), 'claimed', coalesce(d.claimed, 0), 'acked', coalesce(d.acked, 0),
               'failed', coalesce(d.failed, 0), 'expired', coalesce(d.expired, 0)) order by q.name, p.name)
      from unnest(${sql.param(queues)}::text[], ${sql.param(names)}::text[]) x(queue, partition)
      join queen.queues q on q.name = x.queue
      join queen.partitions p on p.queue_id = q.id and p.name = x.partition
      left join lateral (
        select sum(s.last_offset - s.first_offset + 1)::float8 as n from queen.segments s
        where s.partition_id = p.id and s.created_at >= ${since}::timestamptz) s on true
      left join lateral (
        select sum(d.to_offset - d.from_offset + 1)::float8 as claimed,
               coalesce(sum(d.to_offset - d.from_offset + 1) filter (where d.ended in ('acked', 'auto-acked')), 0)::float8 as acked,
               count(*) filter (where d.ended = 'failed')::int as failed,
               count(*) filter (where d.ended = 'expired' or (d.ended_at is null and c.lease_expires_at <= now()))::int as expired
        from queen.deliveries d
        left join queen.cursors c on d.ended_at is null and c.partition_id = d.partition_id
                                 and c.consumer_group = d.consumer_group and c.lease_id = d.lease_id
        where d.partition_id = p.id and d.claimed_at >= ${since}::timestamptz
          and (${group}::text is null or d.consumer_group = ${group})) d on true) as partitions`);
  return { now: rows[0].now, since, partitions: rows[0].partitions ?? [] };
}

export const recentQuery = z.object({ queue: name.optional(), group: name.optional() });

/**
 * The last claims (deliveries, sql/024) of the last RECENT_MINUTES, newest first, in the live
 * feed's shape: one index range by claim time, bounded by the time and the count.
 */
export async function recentClaims(search: URLSearchParams): Promise<{ now: string; events: RecentClaim[] }> {
  const f = parseWith(recentQuery, Object.fromEntries(search), 'query');
  const { rows } = await readDb().execute<{ now: string; events: RecentClaim[] | null }>(sql`
    select queen.iso(now()) as now, (
      select json_agg(json_build_object('type', 'claim', 'earlier', true, 'at', queen.iso(d.claimed_at), 'group', d.consumer_group,
               'holder', d.holder, 'leaseId', d.lease_id, 'autoAck', d.lease_id is null, 'ended', d.ended,
               'partitions', json_build_array(json_build_object('queue', q.name, 'partition', p.name, 'partitionId', p.id,
                                                                'count', d.to_offset - d.from_offset + 1)))
             order by d.claimed_at desc, d.id desc)
      from (select d.* from queen.deliveries d
            join queen.partitions p on p.id = d.partition_id
            join queen.queues q on q.id = p.queue_id
            where d.claimed_at > now() - make_interval(mins => ${RECENT_MINUTES})
              and (${f.queue ?? null}::text is null or q.name = ${f.queue ?? null})
              and (${f.group ?? null}::text is null or d.consumer_group = ${f.group ?? null})
            order by d.claimed_at desc, d.id desc limit ${RECENT_CLAIMS}) d
      join queen.partitions p on p.id = d.partition_id
      join queen.queues q on q.id = p.queue_id) as events`);
  return { now: rows[0].now, events: rows[0].events ?? [] };
}
