import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest } from './errors';
import { containsText } from './text-match';
import { isoTimestamp, name, pageQuery, parseWith } from './validate';

const STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const;

export const filters = z.object({
  queue: name.optional(),
  partition: name.optional(),
  ns: name.optional(),
  task: name.optional(),
  consumerGroup: name.optional(),
  status: z.enum(STATUSES).optional(),
  /** a part of the payload's JSON text, any case (an encrypted queue's payloads are not searched) */
  q: z.string().min(1).max(200, 'must be at most 200 characters').optional(),
  from: isoTimestamp.optional(),
  to: isoTimestamp.optional(),
  ...pageQuery(1000),
});

const DEFAULT_WINDOW_MS = 3600_000;

/**
 * Messages pushed in a time window (the last hour by default), newest first, with their status
 * (`q`: those whose payload's JSON text contains it, any case; read within the window only):
 * for `consumerGroup` when given, else for queue mode, else "every group has passed it" where only
 * groups consume the partition.
 */
export async function listMessages(search: URLSearchParams) {
  const f = parseWith(filters, Object.fromEntries(search), 'query');
  const to = f.to ? new Date(f.to) : new Date();
  const from = f.from ? new Date(f.from) : new Date(to.getTime() - DEFAULT_WINDOW_MS);
  if (from > to) throw badRequest('from: must not be after to');
  const limit = f.limit ?? 200;
  const offset = f.offset ?? 0;
  const group = f.consumerGroup ?? null;
  const { rows } = await db().execute(sql`
    with scope as (
      select p.id, p.name, q.name as queue, q.namespace, q.task
      from queen.partitions p join queen.queues q on q.id = p.queue_id
      where (${f.queue ?? null}::text is null or q.name = ${f.queue ?? null})
        and (${f.partition ?? null}::text is null or p.name = ${f.partition ?? null})
        and (${f.ns ?? null}::text is null or q.namespace = ${f.ns ?? null})
        and (${f.task ?? null}::text is null or q.task = ${f.task ?? null})
    ),
    judged as (
      select m.id, m.transaction_id, m.partition_id, sc.name as partition, sc.queue, sc.namespace, sc.task,
             m.trace_id, m.producer_sub, s.created_at, m."offset", st.status, st.lease_expires_at
      from scope sc
      join queen.segments s on s.partition_id = sc.id and s.created_at >= ${from.toISOString()}::timestamptz
                            and s.created_at <= ${to.toISOString()}::timestamptz
      join queen.messages m on m.partition_id = s.partition_id and m."offset" between s.first_offset and s.last_offset
                           and ${f.q === undefined ? sql`true` : sql`not m.encrypted and ${containsText(sql`m.payload::text`, f.q)}`}
      cross join lateral (
        select case when bool_or(x.state = 'processing') then 'processing'
                    when bool_or(x.state = 'pending') or count(*) = 0 then 'pending'
                    when bool_or(x.state = 'dead_letter') then 'dead_letter'
                    else 'completed' end as status,
               max(x.lease_expires_at) filter (where x.state = 'processing') as lease_expires_at
        from (
          select c.lease_expires_at, case
                   when exists (select 1 from queen.dead_letters d where d.partition_id = c.partition_id
                                and d.consumer_group = c.consumer_group and d."offset" = m."offset") then 'dead_letter'
                   when m."offset" <= c.committed_offset or m."offset" = any (c.acked_offsets) then 'completed'
                   when c.lease_id is not null and c.lease_expires_at > now() and m."offset" <= c.lease_end_offset then 'processing'
                   else 'pending' end as state
          from queen.cursors c
          where c.partition_id = m.partition_id
            and case when ${group}::text is not null then c.consumer_group = ${group}
                     else c.consumer_group = '__QUEUE_MODE__' or not exists (
                       select 1 from queen.cursors qm where qm.partition_id = m.partition_id and qm.consumer_group = '__QUEUE_MODE__') end
        ) x
      ) st
    )
    select j.id, j.transaction_id as "transactionId", j.partition_id as "partitionId", j.queue || '/' || j.partition as "queuePath",
           j.queue, j.partition, j.namespace, j.task, j.status, j.trace_id as "traceId", j.producer_sub as "producerSub",
           queen.iso(j.created_at) as "createdAt", queen.iso(j.lease_expires_at) as "leaseExpiresAt"
    from judged j
    where ${f.status ?? null}::text is null or j.status = ${f.status ?? null}
    order by j.created_at desc, j.partition_id, j."offset" desc
    limit ${limit} offset ${offset}`);
  return { messages: rows, pagination: { limit, offset, from: from.toISOString(), to: to.toISOString() } };
}
