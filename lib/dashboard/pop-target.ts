import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { POP_QUERY, popDefault } from '@/lib/broker/pop-params';
import { name, parseWith } from '@/lib/broker/validate';

/** The pop's queue, and its consumerGroup as the pop reads it (lib/broker/pop-params.ts). */
export const popTargetQuery = z.object({ queue: name, consumerGroup: POP_QUERY.consumerGroup.schema.optional() });

/**
 * What a pop on `queue` for `consumerGroup` would create before it claims anything: the queue
 * (pops create it implicitly) and the group's cursors on it (they persist after the pop). On the
 * primary: the Console asks it just before a pop, which a replica's past would mislead.
 */
export async function popTarget(search: URLSearchParams) {
  const f = parseWith(popTargetQuery, Object.fromEntries(search), 'query');
  const group = f.consumerGroup ?? popDefault('consumerGroup');
  const { rows } = await db().execute<{ queue_exists: boolean; group_exists: boolean }>(sql`
    select exists (select 1 from queen.queues q where q.name = ${f.queue}) as queue_exists,
           exists (select 1 from queen.queues q join queen.queue_groups g on g.queue_id = q.id and g.consumer_group = ${group}
                   where q.name = ${f.queue}) as group_exists`);
  return { queue: f.queue, queueExists: rows[0].queue_exists, consumerGroup: group, groupExists: rows[0].group_exists };
}
