import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { HttpError, notFound } from './errors';
import { name, pageQuery, parseWith, pathName } from './validate';

const MAX_TRACE_NAMES = 20;

const traceName = name.refine((v) => v.length > 0, 'must not be empty');

// What a consumer's msg.trace() sends (the Queen clients: traceNames is one name or a list).
export const traceBody = z.object({
  transactionId: name,
  partitionId: z.string(),
  consumerGroup: name.nullish(),
  eventType: name.nullish(),
  data: z.unknown().refine((v) => v !== undefined, 'is required'),
  traceNames: z.union([traceName, z.array(traceName).max(MAX_TRACE_NAMES)]).nullish(),
});

const messageNotFound = () => new HttpError(404, 'Message not found', { success: false, error: 'Message not found' });

/** Records one trace event of a message; the message must still be stored. */
export async function recordTrace(body: unknown) {
  const input = parseWith(traceBody, body);
  if (!isUuid(input.partitionId)) throw messageNotFound();
  const names = [...new Set(typeof input.traceNames === 'string' ? [input.traceNames] : (input.traceNames ?? []))];
  // The message row is key-share locked: a delete waits for this insert, and then takes the trace along.
  const { rows } = await db().execute<{ id: string }>(sql`
    insert into queen.traces (id, partition_id, "offset", transaction_id, consumer_group, event_type, data, names)
    select queen.uuidv7(), m.partition_id, m."offset", m.transaction_id, ${input.consumerGroup ?? '__QUEUE_MODE__'},
           ${input.eventType ?? 'info'}, ${JSON.stringify(input.data)}::jsonb, ${sql.param(names)}::text[]
    from (select * from queen.messages m
          where m.transaction_id = ${input.transactionId} and m.partition_id = ${input.partitionId}::uuid
          for key share) m
    returning id`);
  if (rows.length === 0) throw messageNotFound();
  return { success: true, traceId: rows[0].id };
}

export interface TraceEvent {
  id: string;
  eventType: string;
  consumerGroup: string;
  data: unknown;
  traceNames: string[];
  createdAt: string;
}

/** Every trace of one message, oldest first. */
export async function messageTraces(
  partitionId: string,
  transactionId: string,
): Promise<{ traces: TraceEvent[]; count: number }> {
  if (!isUuid(partitionId)) throw notFound('message not found');
  const { rows } = await db().execute<{ traces: TraceEvent[] | null }>(sql`
    select (select json_agg(json_build_object(
                     'id', t.id, 'eventType', t.event_type, 'consumerGroup', t.consumer_group, 'data', t.data,
                     'traceNames', t.names, 'createdAt', queen.iso(t.created_at))
                   order by t.created_at, t.id)
            from queen.traces t where t.partition_id = m.partition_id and t."offset" = m."offset") as traces
    from queen.messages m
    where m.transaction_id = ${transactionId} and m.partition_id = ${partitionId}::uuid`);
  if (rows.length === 0) throw notFound('message not found');
  const traces = rows[0].traces ?? [];
  return { traces, count: traces.length };
}

export const namePage = z.object(pageQuery(1000));

/** The traces carrying a name, oldest first, with their message's queue and partition. */
export async function tracesByName(traceNameParam: string, search: URLSearchParams) {
  pathName(traceNameParam, 'name');
  const page = parseWith(namePage, Object.fromEntries(search), 'query');
  const limit = page.limit ?? 100;
  const offset = page.offset ?? 0;
  const { rows } = await db().execute<{ traces: unknown[] | null; total: number }>(sql`
    select (select json_agg(json_build_object(
                     'id', t.id, 'transactionId', t.transaction_id, 'partitionId', t.partition_id,
                     'queue', q.name, 'partition', p.name, 'eventType', t.event_type, 'consumerGroup', t.consumer_group,
                     'data', t.data, 'traceNames', t.names, 'createdAt', queen.iso(t.created_at))
                   order by t.created_at, t.id)
            from (select * from queen.traces t where t.names @> array[${traceNameParam}]::text[]
                  order by t.created_at, t.id limit ${limit} offset ${offset}) t
            join queen.partitions p on p.id = t.partition_id
            join queen.queues q on q.id = p.queue_id) as traces,
           (select count(*)::int from queen.traces t where t.names @> array[${traceNameParam}]::text[]) as total`);
  const traces = rows[0].traces ?? [];
  return { traces, count: traces.length, total: rows[0].total, limit, offset };
}

/** The trace names in use, most recently seen first, with how many traces and messages carry each. */
export async function traceNames(search: URLSearchParams) {
  const page = parseWith(namePage, Object.fromEntries(search), 'query');
  const limit = page.limit ?? 50;
  const offset = page.offset ?? 0;
  const { rows } = await db().execute<{ names: unknown[] | null; total: number }>(sql`
    with used as (
      select n as name, count(*)::int as traces, count(distinct (t.partition_id, t."offset"))::int as messages,
             max(t.created_at) as last_seen
      from queen.traces t cross join lateral unnest(t.names) n
      group by n)
    select (select json_agg(json_build_object('traceName', u.name, 'traceCount', u.traces, 'messageCount', u.messages,
                                              'lastSeen', queen.iso(u.last_seen))
                            order by u.last_seen desc, u.name)
            from (select * from used order by last_seen desc, name limit ${limit} offset ${offset}) u) as names,
           (select count(*)::int from used) as total`);
  const names = rows[0].names ?? [];
  return { traceNames: names, count: names.length, total: rows[0].total, limit, offset };
}
