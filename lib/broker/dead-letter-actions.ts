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
  /** a requeue: the other groups reading the partition, for which the copy counts as done */
  doneFor?: string[] | null;
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

/** What another group did with a message whose dead letters are requeued or discarded (counts of messages). */
export interface OtherGroupState {
  group: string;
  /** done with the original (acked, skipped, or passed) */
  done: number;
  /** not reached yet, or an expired lease on it not reclaimed */
  pending: number;
  /** a live lease of the group holds it */
  leased: number;
  /** the group dead-lettered it too (and that dead letter is not part of this action) */
  deadLettered: number;
}

/**
 * Per queue, what a requeue or discard of these dead letters would touch, and what every other
 * group reading their partitions did with the originals (a requeued copy is counted done for
 * them: they do not receive it).
 */
export interface DeadLetterPreview {
  dryRun: true;
  deadLetters: number;
  messages: number;
  notFound: number;
  queues: { queue: string; deadLetters: number; messages: number; otherGroups: OtherGroupState[] }[];
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
      select c.queue_id, c.consumer_group,
             case when exists (select 1 from queen.dead_letters d
                               where d.partition_id = m.pid and d.consumer_group = c.consumer_group and d."offset" = m.off)
                    then 'deadLettered'
                  when m.off <= c.committed_offset or m.off = any (c.acked_offsets) then 'done'
                  when c.lease_id is not null and c.lease_expires_at > now() and m.off <= c.lease_end_offset then 'leased'
                  else 'pending' end as state
      from messages m join queen.cursors c on c.partition_id = m.pid
      where c.consumer_group <> all (m.groups)
    ),
    per_group as (
      select o.queue_id, o.consumer_group,
             jsonb_build_object('group', o.consumer_group,
               'done', count(*) filter (where o.state = 'done'), 'pending', count(*) filter (where o.state = 'pending'),
               'leased', count(*) filter (where o.state = 'leased'),
               'deadLettered', count(*) filter (where o.state = 'deadLettered')) as state
      from others o group by o.queue_id, o.consumer_group
    )
    select q.name as queue, count(*)::int as "deadLetters", count(distinct (f.pid, f.off))::int as messages,
           coalesce((select jsonb_agg(g.state order by g.consumer_group) from per_group g where g.queue_id = q.id), '[]')
             as "otherGroups"
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
 * a new message for the groups whose dead letters are requeued only: every other group reading the
 * partition counts it as done in the same transaction (sql/functions/dead_letters.sql); the dead
 * letters go. One transaction; an unknown dead letter is reported on its item and changes nothing.
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
