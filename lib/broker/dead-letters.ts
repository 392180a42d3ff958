import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { RawJson } from '@/lib/exact-json';
import { payloadText } from './crypto';
import { badRequest } from './errors';
import { containsText } from './text-match';
import { isoTimestamp, name, parseWith, queryInteger } from './validate';

/** What selects dead letters, in a query string (GET /api/v1/dlq) and in a requeue or discard body. */
export const matchFields = {
  queue: name.optional(),
  consumerGroup: name.optional(),
  partition: name.optional(),
  /** a part of the last error, any case */
  error: z.string().max(500, 'must be at most 500 characters').optional(),
  /** the whole last error, exactly ('' for none): one group of the dead letters by error */
  errorIs: z.string().max(10_000, 'must be at most 10000 characters').optional(),
  /** failed at or after */
  since: isoTimestamp.optional(),
  /** failed before */
  until: isoTimestamp.optional(),
};

type DeadLetterMatch = { [K in keyof typeof matchFields]?: string };

export const filters = z.object({
  ...matchFields,
  limit: queryInteger(0, 1000).optional(),
  offset: queryInteger().optional(),
});

/** The where clause over `d` (dead_letters), `p` (partitions) and `q` (queues); refuses since ≥ until. */
export function matching(f: DeadLetterMatch, field = 'since'): SQL {
  if (f.since && f.until && Date.parse(f.since) >= Date.parse(f.until))
    throw badRequest(`${field}: must be before until`);
  const v = (x: string | undefined) => x ?? null;
  return sql`(${v(f.queue)}::text is null or q.name = ${v(f.queue)})
    and (${v(f.consumerGroup)}::text is null or d.consumer_group = ${v(f.consumerGroup)})
    and (${v(f.partition)}::text is null or p.name = ${v(f.partition)})
    and ${containsText(sql`d.error_message`, f.error)}
    and (${v(f.errorIs)}::text is null or coalesce(d.error_message, '') = ${v(f.errorIs)})
    and (${v(f.since)}::timestamptz is null or d.failed_at >= ${v(f.since)}::timestamptz)
    and (${v(f.until)}::timestamptz is null or d.failed_at < ${v(f.until)}::timestamptz)`;
}

/**
 * Dead letters, newest failure first; every filter optional (queue, group and partition exact,
 * error a case-insensitive substring). Beyond the spec's fields each carries its `offset`, which
 * with partitionId and consumerGroup names it to a requeue or discard.
 */
export async function listDeadLetters(search: URLSearchParams) {
  const f = parseWith(filters, Object.fromEntries(search), 'query');
  const limit = f.limit ?? 100;
  const offset = f.offset ?? 0;
  const where = matching(f);
  // one FROM for the rows and their total: the message, or the copy the dead letter kept when the
  // message was removed; one gone without a copy (removed before copies were kept) is neither listed nor counted
  const listed = sql`queen.dead_letters d
    join queen.partitions p on p.id = d.partition_id
    join queen.queues q on q.id = p.queue_id
    left join queen.messages m on m.partition_id = d.partition_id and m."offset" = d."offset"
    left join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset`;
  const kept = sql`(m.partition_id is not null or d.payload is not null)`;
  const { rows } = await db().execute<Record<string, unknown> & { data: string; encrypted: boolean }>(sql`
    select coalesce(m.id, d.message_id) as id, coalesce(m.transaction_id, d.transaction_id) as "transactionId",
           d.partition_id as "partitionId", q.name as queue, p.name as partition,
           d.consumer_group as "consumerGroup", d.error_message as "errorMessage", d.retry_count as "retryCount",
           coalesce(m.payload, d.payload)::text as data, coalesce(m.encrypted, d.encrypted) as encrypted,
           coalesce(m.producer_sub, d.producer_sub) as "producerSub", queen.iso(coalesce(s.created_at, d.created_at)) as "createdAt",
           queen.iso(d.failed_at) as "failedAt", d."offset"::float8 as "offset"
    from ${listed}
    where ${where} and ${kept}
    order by d.failed_at desc, d."offset" desc
    limit ${limit} offset ${offset}`);
  const total = await db().execute<{ n: number }>(
    sql`select count(*)::int as n from ${listed} where ${where} and ${kept}`,
  );
  return {
    messages: rows.map(({ encrypted, ...r }) => ({ ...r, data: new RawJson(payloadText(r.data, encrypted)) })),
    pagination: { limit, offset, total: total.rows[0].n },
  };
}
