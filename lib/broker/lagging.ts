import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { parseWith, queryInteger } from './validate';

const TEN_YEARS_SECONDS = 10 * 365 * 24 * 3600;

export const lagQuery = z.object({
  minLagSeconds: queryInteger(0, TEN_YEARS_SECONDS).optional(),
  limit: queryInteger(1, 10_000).optional(),
});

/**
 * (group, partition) pairs whose oldest unconsumed message is older than minLagSeconds, oldest
 * first, snake_case as Queen MQ answers. Read from the backlog (sql/007), which holds exactly the
 * pairs with something unconsumed and since when: the same rows the consumer-group routes sum up.
 */
export async function laggingPartitions(search: URLSearchParams) {
  const q = parseWith(lagQuery, Object.fromEntries(search), 'query');
  const { rows } = await db().execute(sql`
    select b.consumer_group, q.name as queue_name, p.name as partition_name, p.id as partition_id,
           greatest(p.head_offset - c.committed_offset, 0)::float8 as offset_lag,
           extract(epoch from now() - b.pending_since)::float8 as time_lag_seconds,
           queen.iso(b.pending_since) as oldest_unconsumed_at, queen.iso(c.last_ack_at) as last_consumed_at
    from queen.backlog b
    join queen.cursors c on c.partition_id = b.partition_id and c.consumer_group = b.consumer_group
    join queen.partitions p on p.id = b.partition_id
    join queen.queues q on q.id = b.queue_id
    where b.pending_since <= now() - make_interval(secs => ${q.minLagSeconds ?? 3600})
      and p.head_offset > c.committed_offset
    order by b.pending_since, b.consumer_group, q.name, p.name
    limit ${q.limit ?? 1000}`);
  return rows;
}
