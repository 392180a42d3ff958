import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { parseWith, queryInteger } from '@/lib/http/validate';
import { payloadText } from './crypto';

export const filters = z.object({
  queue: z.string().optional(),
  consumerGroup: z.string().optional(),
  partition: z.string().optional(),
  limit: queryInteger(0, 1000).optional(),
  offset: queryInteger().optional(),
});

/** Dead letters, newest failure first; every filter optional. */
export async function listDeadLetters(search: URLSearchParams) {
  const f = parseWith(filters, Object.fromEntries(search), 'query');
  const limit = f.limit ?? 100;
  const offset = f.offset ?? 0;
  const where = sql`(${f.queue ?? null}::text is null or q.name = ${f.queue ?? null})
    and (${f.consumerGroup ?? null}::text is null or d.consumer_group = ${f.consumerGroup ?? null})
    and (${f.partition ?? null}::text is null or p.name = ${f.partition ?? null})`;
  const { rows } = await db().execute<Record<string, unknown> & { data: string; encrypted: boolean }>(sql`
    select m.id, m.transaction_id as "transactionId", d.partition_id as "partitionId", q.name as queue, p.name as partition,
           d.consumer_group as "consumerGroup", d.error_message as "errorMessage", d.retry_count as "retryCount",
           m.payload::text as data, m.encrypted, m.producer_sub as "producerSub", queen.iso(s.created_at) as "createdAt",
           queen.iso(d.failed_at) as "failedAt"
    from queen.dead_letters d
    join queen.partitions p on p.id = d.partition_id
    join queen.queues q on q.id = p.queue_id
    join queen.messages m on m.partition_id = d.partition_id and m."offset" = d."offset"
    join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
    where ${where}
    order by d.failed_at desc, d."offset" desc
    limit ${limit} offset ${offset}`);
  const total = await db().execute<{ n: number }>(sql`
    select count(*)::int as n from queen.dead_letters d
    join queen.partitions p on p.id = d.partition_id join queen.queues q on q.id = p.queue_id
    where ${where}`);
  return {
    messages: rows.map(({ encrypted, ...r }) => ({ ...r, data: JSON.parse(payloadText(r.data, encrypted)) })),
    pagination: { limit, offset, total: total.rows[0].n },
  };
}
