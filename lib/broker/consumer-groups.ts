import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { HttpError, badRequest, notFound } from './errors';
import { isoTimestamp as timestamp, name, parseWith, pathName, queryReason, reasonText } from './validate';
import { wakeLocal } from './waiters';

/**
 * One entry per (group, queue): partitions, total offset lag, oldest unconsumed age, subscription.
 * Lag counts every partition of the queue, from the group's seed where it never claimed.
 */
export async function listConsumerGroups() {
  const { rows } = await db().execute(sql`
    select g.consumer_group as name, q.name as "queueName", g.partitions::int as partitions,
           g.lag::float8 as "totalLag",
           extract(epoch from now() - g.oldest_pending)::float8 as "oldestUnconsumedAgeSeconds",
           (select json_build_object('mode', sub.mode, 'startAt', queen.iso(sub.start_at))
            from queen.subscriptions sub where sub.queue_id = q.id and sub.consumer_group = g.consumer_group) as subscription
    from queen.group_figures() g
    join queen.queues q on q.id = g.queue_id
    order by g.consumer_group, q.name`);
  return rows;
}

/** Per queue (with its total lag), per partition: committed offset, head, lag, lease and pause. */
export async function getConsumerGroup(group: string) {
  const { rows } = await db().execute<{ queueName: string; totalLag: number; partitions: unknown[] }>(sql`
    select q.name as "queueName", g.lag::float8 as "totalLag",
           (select json_agg(json_build_object(
                     'partitionId', p.id, 'partition', p.name,
                     'committedOffset', c.committed_offset, 'headOffset', p.head_offset,
                     'lag', greatest(p.head_offset - c.committed_offset, 0),
                     'lease', case when c.lease_id is not null then json_build_object(
                         'leaseId', c.lease_id, 'expiresAt', queen.iso(c.lease_expires_at), 'holder', c.lease_holder,
                         'live', c.lease_expires_at > now()) end,
                     'paused', c.paused and (c.paused_until is null or c.paused_until > now()))
                     order by p.name)
            from queen.cursors c join queen.partitions p on p.id = c.partition_id
            where c.queue_id = g.queue_id and c.consumer_group = g.consumer_group) as partitions
    from queen.group_figures() g
    join queen.queues q on q.id = g.queue_id
    where g.consumer_group = ${group}
    order by q.name`);
  if (rows.length === 0) throw notFound(`consumer group ${JSON.stringify(group)} not found`);
  return { consumerGroup: group, queues: rows.map((r) => ({ ...r, partitions: r.partitions ?? [] })) };
}

export const subscriptionBody = z.union([
  z.object({
    queue: name,
    subscriptionMode: z.string().optional(),
    subscriptionFrom: z.union([z.literal('now'), timestamp]).optional(),
  }),
  z.object({ subscriptionTimestamp: timestamp }),
]);

export async function setSubscription(group: string, body: unknown, actor: string) {
  pathName(group, 'group');
  const input = parseWith(subscriptionBody, body);
  if ('subscriptionTimestamp' in input) {
    const { rows } = await db().execute<{ n: number }>(
      sql`select queen.move_subscriptions(${group}, ${new Date(input.subscriptionTimestamp).toISOString()}::timestamptz, ${actor}) as n`,
    );
    return { success: true, consumerGroup: group, subscriptionsUpdated: rows[0].n };
  }
  const mode = input.subscriptionMode?.toLowerCase();
  // 'now' is resolved by PostgreSQL, on the database's clock like every other time.
  const from = !input.subscriptionFrom
    ? null
    : input.subscriptionFrom === 'now'
      ? 'now'
      : new Date(input.subscriptionFrom).toISOString();
  const { rows } = await db().execute<{
    queue_name: string;
    consumer_group: string;
    mode: string;
    start_at: string | null;
  }>(sql`
    select * from queen.set_subscription(${input.queue}, ${group}, ${mode === 'new' || mode === 'new-only' ? 'new' : 'all'},
                                         ${from}::timestamptz, ${actor})`);
  const r = rows[0];
  return { success: true, consumerGroup: r.consumer_group, queueName: r.queue_name, mode: r.mode, startAt: r.start_at };
}

const reason = { reason: reasonText };
export const seekBody = z.union([z.object({ toEnd: z.literal(true), ...reason }), z.object({ timestamp, ...reason })]);

/** Where a seek goes: `{"toEnd":true}` or `{"timestamp":"<ISO>"}`, with an optional reason. */
function seekTarget(body: unknown) {
  const input = parseWith(seekBody, body);
  return {
    toEnd: 'toEnd' in input,
    at: 'timestamp' in input ? new Date(input.timestamp).toISOString() : null,
    reason: input.reason ?? null,
  };
}

export async function seek(group: string, queue: string, body: unknown, actor: string) {
  pathName(group, 'group');
  pathName(queue, 'queue');
  const { toEnd, at, reason } = seekTarget(body);
  const { rows } = await db().execute<{ n: number | null }>(
    sql`select queen.seek(${group}, ${queue}, ${toEnd}, ${at}::timestamptz, ${reason}, ${actor}) as n`,
  );
  if (rows[0].n === null) throw notFound(`queue ${JSON.stringify(queue)} not found`);
  wakeLocal([queue]);
  return { success: true, consumerGroup: group, queueName: queue, partitionsUpdated: rows[0].n };
}

/** One partition's cursor, with the same semantics and audit as the queue-wide seek. */
export async function seekPartition(group: string, queue: string, partition: string, body: unknown, actor: string) {
  pathName(group, 'group');
  pathName(queue, 'queue');
  pathName(partition, 'partition');
  const { toEnd, at, reason } = seekTarget(body);
  const { rows } = await db().execute<{ to: number | null }>(sql`
    select queen.seek_partition(${group}, ${queue}, ${partition}, ${toEnd}, ${at}::timestamptz, ${reason}, ${actor})::float8 as to`);
  if (rows[0].to === null)
    throw new HttpError(404, 'Partition not found', { success: false, error: 'Partition not found' });
  wakeLocal([queue]);
  return { success: true, consumerGroup: group, queueName: queue, partitionName: partition, cursorMovedTo: rows[0].to };
}

/** `?reason=` is recorded in the audit log. */
export async function deleteConsumerGroup(group: string, queue: string | null, search: URLSearchParams, actor: string) {
  const raw = search.get('deleteMetadata');
  if (raw !== null && raw !== 'true' && raw !== 'false') throw badRequest('deleteMetadata: must be true or false');
  const deleteMetadata = raw !== 'false';
  pathName(group, 'group');
  if (queue !== null) pathName(queue, 'queue');
  const { rows } = await db().execute<{ n: number }>(
    sql`select queen.delete_consumer_group(${group}, ${queue}, ${deleteMetadata}, ${queryReason(search)}, ${actor}) as n`,
  );
  return { success: true, consumerGroup: group, deletedPartitions: rows[0].n, metadataDeleted: deleteMetadata };
}
