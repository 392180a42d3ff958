import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { name, parseWith, queryInteger } from '@/lib/broker/validate';
import { ERROR_GROUPS_PAGE_SIZE } from './dead-letter-filters';

export const deadLetterErrorsQuery = z.object({
  queue: name.optional(),
  consumerGroup: name.optional(),
  page: queryInteger(1, 100_000).optional(),
});

export interface DeadLetterErrorGroup {
  /** the whole last error ('' for none): POST /api/v1/dlq/requeue|discard's filter.errorIs */
  error: string;
  deadLetters: number;
  firstFailedAt: string;
  lastFailedAt: string;
  /** the queues they are in (the first 5 by name) and how many */
  queues: string[];
  queueCount: number;
  consumerGroups: string[];
  consumerGroupCount: number;
}

export interface DeadLetterErrorList {
  /** error groups, and dead letters, that match */
  total: number;
  deadLetters: number;
  groups: DeadLetterErrorGroup[];
}

/**
 * Dead letters grouped by their last error text (Queen's DLQ view): how many, first and last
 * failure, where; most frequent first. Counts every dead letter the requeue or discard of the group
 * (filter.errorIs) acts on.
 */
export async function deadLetterErrors(search: URLSearchParams): Promise<DeadLetterErrorList> {
  const f = parseWith(deadLetterErrorsQuery, Object.fromEntries(search), 'query');
  const page = f.page ?? 1;
  const queue = f.queue ?? null;
  const group = f.consumerGroup ?? null;
  const { rows } = await readDb().execute<{ list: DeadLetterErrorList }>(sql`
    with matched as (
      select coalesce(d.error_message, '') as error, d.failed_at, q.name as queue, d.consumer_group
      from queen.dead_letters d
      join queen.partitions p on p.id = d.partition_id join queen.queues q on q.id = p.queue_id
      where (${queue}::text is null or q.name = ${queue}) and (${group}::text is null or d.consumer_group = ${group})
    ),
    grouped as (
      select m.error, count(*)::int as n, min(m.failed_at) as first_at, max(m.failed_at) as last_at,
             array_agg(distinct m.queue order by m.queue) as queues,
             array_agg(distinct m.consumer_group order by m.consumer_group) as groups
      from matched m group by m.error
    )
    select jsonb_build_object(
      'total', (select count(*)::int from grouped),
      'deadLetters', (select count(*)::int from matched),
      'groups', coalesce((select jsonb_agg(jsonb_build_object(
          'error', g.error, 'deadLetters', g.n, 'firstFailedAt', queen.iso(g.first_at), 'lastFailedAt', queen.iso(g.last_at),
          'queues', to_jsonb(g.queues[1:5]), 'queueCount', cardinality(g.queues),
          'consumerGroups', to_jsonb(g.groups[1:5]), 'consumerGroupCount', cardinality(g.groups)) order by g.n desc, g.error)
        from (select * from grouped order by n desc, error limit ${ERROR_GROUPS_PAGE_SIZE}
              offset ${(page - 1) * ERROR_GROUPS_PAGE_SIZE}) g), '[]')
    ) as list`);
  return rows[0].list;
}
