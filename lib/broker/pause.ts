import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { notFound } from './errors';
import { isoTimestamp, parseWith, pathName, reasonText } from './validate';
import { wakeLocal } from './waiters';

export const pauseBody = z.object({
  paused: z.boolean(),
  reason: reasonText,
  until: isoTimestamp.nullish(),
});

/** Pauses or resumes one (partition, group): pops skip a paused cursor until it resumes or `until` passes. */
export async function setPause(partitionId: string, group: string, body: unknown, actor: string) {
  pathName(group, 'group');
  const { paused, reason, until } = parseWith(pauseBody, body);
  const untilIso = paused && until ? new Date(until).toISOString() : null;
  if (!isUuid(partitionId)) throw notFound('partition not found');
  const { rows } = await db().execute<{ queue: string | null }>(sql`
    select case when queen.set_pause(${partitionId}::uuid, ${group}, ${paused}, ${reason ?? null}, ${untilIso}::timestamptz, ${actor})
                then (select q.name from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = ${partitionId}::uuid) end as queue`);
  const queue = rows[0].queue;
  if (queue === null) throw notFound('partition not found');
  if (!paused) wakeLocal([queue]);
  return { partitionId, consumerGroup: group, paused, reason: paused ? (reason ?? null) : null, until: untilIso };
}
