import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { RawJson } from '@/lib/exact-json';
import { payloadText } from './crypto';
import { notFound } from './errors';
import { groupState } from './message-state';

type MessageRow = {
  id: string;
  transaction_id: string;
  partition_id: string;
  partition: string;
  queue: string;
  offset: number;
  created_at: string;
  trace_id: string | null;
  producer_sub: string | null;
  data: string;
  encrypted: boolean;
  consumer_groups: {
    name: string;
    state: string;
    deliveries: number;
    failures: number;
    lastError: string | null;
    leaseId: string | null;
    leaseExpiresAt: string | null;
    attempts: AttemptError[];
    lease: HeldBy | null;
  }[];
  deliveries: Delivery[];
};

/** The lease on a message now: live, or expired and not yet reclaimed (what a set-aside ends). */
export interface HeldBy {
  leaseId: string;
  holder: string | null;
  expiresAt: string;
  expired: boolean;
}

/**
 * One delivery of a span holding the message to a group (sql/024), newest first: who got it
 * under which lease, and how it ended (null while its lease is held: `live`, or `expired` not yet
 * reclaimed; `acked`, `failed`, `expired`, `released`, `dead-lettered`, `skipped`, `moved` by a
 * seek or a delete, `auto-acked`).
 */
export interface Delivery {
  group: string;
  leaseId: string | null;
  holder: string | null;
  from: number;
  to: number;
  claimedAt: string;
  expiresAt: string | null;
  extensions: number;
  endedAt: string | null;
  ended: string;
}

/** At most this many deliveries of a message are listed (newest first). */
export const MAX_DELIVERIES_LISTED = 200;

/** One failed attempt of a message in a group (sql/018). */
export interface AttemptError {
  attempt: number;
  error: string | null;
  at: string;
}

/** The per-message management route: where a message stands in every group, with its attempt counts and every failed attempt's error. */
export async function getMessage(partitionId: string, transactionId: string) {
  if (!isUuid(partitionId)) throw notFound('message not found');
  const { rows } = await db().execute<MessageRow>(sql`
    select m.id, m.transaction_id, m.partition_id, p.name as partition, q.name as queue, m."offset"::float8 as "offset",
           queen.iso(s.created_at) as created_at, m.trace_id, m.producer_sub, m.payload::text as data, m.encrypted,
           coalesce((
             select json_agg(json_build_object(
               'name', c.consumer_group,
               'state', ${groupState(sql`m."offset"`, sql`d."offset" is not null`)},
               'deliveries', coalesce(a.deliveries, case when m."offset" <= c.max_delivered_offset then 1 else 0 end),
               'failures', coalesce(a.failures, 0),
               'lastError', a.last_error,
               'leaseId', case when c.lease_expires_at > now() and m."offset" > c.committed_offset and m."offset" <= c.lease_end_offset then c.lease_id end,
               'leaseExpiresAt', case when c.lease_expires_at > now() and m."offset" > c.committed_offset and m."offset" <= c.lease_end_offset then queen.iso(c.lease_expires_at) end,
               'lease', case when c.lease_id is not null and m."offset" > c.committed_offset and m."offset" <= c.lease_end_offset
                             then json_build_object('leaseId', c.lease_id, 'holder', c.lease_holder,
                                                    'expiresAt', queen.iso(c.lease_expires_at), 'expired', c.lease_expires_at <= now()) end,
               'attempts', coalesce((
                 select json_agg(json_build_object('attempt', e.attempt, 'error', e.error, 'at', queen.iso(e.at)) order by e.attempt)
                 from queen.attempt_errors e
                 where e.partition_id = m.partition_id and e."offset" = m."offset" and e.consumer_group = c.consumer_group), '[]'))
               order by c.consumer_group)
             from queen.cursors c
             left join queen.message_attempts a on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = m."offset"
             left join queen.dead_letters d on d.partition_id = c.partition_id and d.consumer_group = c.consumer_group and d."offset" = m."offset"
             where c.partition_id = m.partition_id), '[]') as consumer_groups,
           coalesce((
             select json_agg(json_build_object('group', d.consumer_group, 'leaseId', d.lease_id, 'holder', d.holder,
                      'from', d.from_offset, 'to', d.to_offset, 'claimedAt', queen.iso(d.claimed_at),
                      'expiresAt', queen.iso(coalesce(c.lease_expires_at, d.expires_at)), 'extensions', coalesce(c.lease_extensions, d.extensions, 0),
                      'endedAt', queen.iso(d.ended_at),
                      'ended', coalesce(d.ended, case when c.lease_id is null then 'gone'
                                                      when c.lease_expires_at <= now() then 'expired, not reclaimed' else 'live' end))
                    order by d.claimed_at desc, d.id desc)
             from (select * from queen.deliveries d
                   where d.partition_id = m.partition_id and d.from_offset <= m."offset" and d.to_offset >= m."offset"
                   order by d.claimed_at desc, d.id desc limit ${MAX_DELIVERIES_LISTED}) d
             left join queen.cursors c on d.ended_at is null and c.partition_id = d.partition_id
                                      and c.consumer_group = d.consumer_group and c.lease_id = d.lease_id), '[]') as deliveries
    from queen.messages m
    join queen.partitions p on p.id = m.partition_id
    join queen.queues q on q.id = p.queue_id
    join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
    where m.transaction_id = ${transactionId} and m.partition_id = ${partitionId}::uuid`);
  if (rows.length === 0) throw notFound('message not found');
  const r = rows[0];
  return {
    id: r.id,
    transactionId: r.transaction_id,
    partitionId: r.partition_id,
    partition: r.partition,
    queue: r.queue,
    offset: r.offset,
    createdAt: r.created_at,
    traceId: r.trace_id,
    producerSub: r.producer_sub,
    data: new RawJson(payloadText(r.data, r.encrypted)),
    consumerGroups: r.consumer_groups,
    deliveries: r.deliveries,
  };
}

/** The transaction id of the message at an offset of a partition; null when there is none (never pushed, or deleted). */
export async function transactionIdAt(partitionId: string, offset: string): Promise<string | null> {
  if (!isUuid(partitionId) || !/^\d{1,15}$/.test(offset)) return null;
  const { rows } = await db().execute<{ transaction_id: string }>(
    sql`select m.transaction_id from queen.messages m where m.partition_id = ${partitionId}::uuid and m."offset" = ${Number(offset)}`,
  );
  return rows[0]?.transaction_id ?? null;
}
