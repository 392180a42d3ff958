import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { notFound } from '@/lib/http/errors';
import { isUuid } from '@/lib/uuid';
import { payloadText } from './crypto';
import { groupState } from './message-state';

type MessageRow = {
  id: string; transaction_id: string; partition_id: string; partition: string; queue: string; offset: number;
  created_at: string; trace_id: string | null; producer_sub: string | null; data: string; encrypted: boolean;
  consumer_groups: { name: string; state: string; deliveries: number; failures: number; lastError: string | null; leaseId: string | null; leaseExpiresAt: string | null }[];
};

/** The per-message management route: where a message stands in every group, with its attempt counts. */
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
               'leaseExpiresAt', case when c.lease_expires_at > now() and m."offset" > c.committed_offset and m."offset" <= c.lease_end_offset then queen.iso(c.lease_expires_at) end)
               order by c.consumer_group)
             from queen.cursors c
             left join queen.message_attempts a on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = m."offset"
             left join queen.dead_letters d on d.partition_id = c.partition_id and d.consumer_group = c.consumer_group and d."offset" = m."offset"
             where c.partition_id = m.partition_id), '[]') as consumer_groups
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
    data: JSON.parse(payloadText(r.data, r.encrypted)),
    consumerGroups: r.consumer_groups,
  };
}
