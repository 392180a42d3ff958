import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { retryingConflicts } from './conflicts';
import { matchFields, matching } from './dead-letters';
import { MAX_DEAD_LETTER_ITEMS } from './dead-letter-limit';
import { badRequest } from './errors';
import { rethrowPushRefusal } from './push';
import { name, parseWith, reasonText } from './validate';
import { wakeLocal } from './waiters';

const deadLetterKey = z
  .object({
    partitionId: z.string().refine(isUuid, 'must be a UUID'),
    consumerGroup: name,
    offset: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  })
  .strict();

/** Either the dead letters by key, or every one a filter matches (at most MAX_DEAD_LETTER_ITEMS). */
export const deadLetterActionBody = z
  .object({
    items: z
      .array(deadLetterKey)
      .min(1, 'must name at least one dead letter')
      .max(MAX_DEAD_LETTER_ITEMS, `must name at most ${MAX_DEAD_LETTER_ITEMS} dead letters`)
      .optional(),
    filter: z.object(matchFields).strict().optional(),
    reason: reasonText,
    /** answer what the call would do, doing nothing */
    dryRun: z.boolean().optional(),
  })
  .strict()
  .refine((b) => (b.items === undefined) !== (b.filter === undefined), {
    message: 'give either items or filter, not both',
    path: ['items'],
  })
  .refine((b) => b.dryRun || (b.reason ?? '').trim() !== '', {
    message: 'must say why (it goes to the audit log)',
    path: ['reason'],
  });

type DeadLetterKey = z.output<typeof deadLetterKey>;

export interface DeadLetterResult {
  index: number;
  partitionId: string;
  consumerGroup: string;
  offset: number;
  success: boolean;
  error: string | null;
  queue: string | null;
  partition: string | null;
  transactionId: string | null;
  /** the dead letter's error and attempt count, gone with it */
  lastError: string | null;
  retryCount: number | null;
  newTransactionId?: string | null;
  newMessageId?: string | null;
  newOffset?: number | null;
}

/** The keys of the body, refusing one named twice; or those its filter matches, refusing more than the cap. */
async function keysOf(body: z.output<typeof deadLetterActionBody>): Promise<DeadLetterKey[]> {
  if (body.items) {
    const seen = new Map<string, number>();
    body.items.forEach((k, i) => {
      const key = `${k.partitionId}/${k.consumerGroup}/${k.offset}`;
      const first = seen.get(key);
      if (first !== undefined) throw badRequest(`items[${i}]: repeats items[${first}]`);
      seen.set(key, i);
    });
    return body.items;
  }
  const { rows } = await db().execute<DeadLetterKey>(sql`
    select d.partition_id as "partitionId", d.consumer_group as "consumerGroup", d."offset"::float8 as "offset"
    from queen.dead_letters d
    join queen.partitions p on p.id = d.partition_id join queen.queues q on q.id = p.queue_id
    where ${matching(body.filter!, 'filter.since')}
    order by d.failed_at desc, d."offset" desc
    limit ${MAX_DEAD_LETTER_ITEMS + 1}`);
  if (rows.length > MAX_DEAD_LETTER_ITEMS) {
    throw badRequest(
      `filter: matches more than ${MAX_DEAD_LETTER_ITEMS} dead letters; narrow it (at most ${MAX_DEAD_LETTER_ITEMS} per call)`,
    );
  }
  return rows;
}

/** Per queue, what a requeue or discard of these dead letters would touch, and which other groups would receive requeued copies. */
export interface DeadLetterPreview {
  dryRun: true;
  deadLetters: number;
  messages: number;
  notFound: number;
  queues: { queue: string; deadLetters: number; messages: number; otherGroups: string[] }[];
}

async function preview(keys: DeadLetterKey[]): Promise<DeadLetterPreview> {
  const { rows } = await db().execute<DeadLetterPreview['queues'][number]>(sql`
    with k as (
      select x."partitionId" as pid, x."consumerGroup" as grp, x."offset" as off
      from jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) as x("partitionId" uuid, "consumerGroup" text, "offset" bigint)
    ),
    found as (
      select k.* from k join queen.dead_letters d on d.partition_id = k.pid and d.consumer_group = k.grp and d."offset" = k.off
    ),
    messages as (select f.pid, f.off, array_agg(f.grp) as groups from found f group by f.pid, f.off),
    others as (
      select distinct p.queue_id, c.consumer_group
      from messages m join queen.cursors c on c.partition_id = m.pid join queen.partitions p on p.id = m.pid
      where c.consumer_group <> all (m.groups)
    )
    select q.name as queue, count(*)::int as "deadLetters", count(distinct (f.pid, f.off))::int as messages,
           array(select o.consumer_group from others o where o.queue_id = q.id order by o.consumer_group) as "otherGroups"
    from found f join queen.partitions p on p.id = f.pid join queen.queues q on q.id = p.queue_id
    group by q.id, q.name
    order by q.name`);
  const deadLetters = rows.reduce((n, q) => n + q.deadLetters, 0);
  return {
    dryRun: true,
    deadLetters,
    messages: rows.reduce((n, q) => n + q.messages, 0),
    notFound: keys.length - deadLetters,
    queues: rows,
  };
}

async function act(fn: 'requeue_dead_letters' | 'discard_dead_letters', input: unknown, actor: string) {
  const body = parseWith(deadLetterActionBody, input);
  const keys = await keysOf(body);
  if (body.dryRun) return preview(keys);
  if (keys.length === 0) return [];
  const call =
    fn === 'requeue_dead_letters'
      ? sql`select queen.requeue_dead_letters(${JSON.stringify(keys)}::jsonb, ${body.reason}, ${actor}) as results`
      : sql`select queen.discard_dead_letters(${JSON.stringify(keys)}::jsonb, ${body.reason}, ${actor}) as results`;
  try {
    const { rows } = await retryingConflicts(() => db().execute<{ results: DeadLetterResult[] }>(call));
    return rows[0].results;
  } catch (err) {
    return rethrowPushRefusal(err);
  }
}

/**
 * Requeue (admin; `dryRun` answers what it would do): each message goes back to its partition as
 * a new message, which every group consuming the partition receives (sql/018, docs/decisions.md);
 * the dead letters go. One transaction; an unknown dead letter is reported on its item and
 * changes nothing.
 */
export async function requeueDeadLetters(input: unknown, actor: string) {
  const results = await act('requeue_dead_letters', input, actor);
  if (!Array.isArray(results)) return results;
  const queues = [...new Set(results.filter((r) => r.success).map((r) => r.queue!))];
  if (queues.length) wakeLocal(queues);
  return { requeued: results.filter((r) => r.success).length, results };
}

/**
 * Discard (admin; `dryRun` answers what it would do): the dead letters go; their messages stay
 * done for their groups.
 */
export async function discardDeadLetters(input: unknown, actor: string) {
  const results = await act('discard_dead_letters', input, actor);
  if (!Array.isArray(results)) return results;
  return { discarded: results.filter((r) => r.success).length, results };
}
