import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { containsText } from './text-match';
import { parseWith, queryInteger } from './validate';

export const filters = z.object({
  target: z.string().optional(),
  action: z.string().optional(),
  actor: z.string().optional(),
  queue: z.string().optional(),
  group: z.string().optional(),
  partitionId: z.string().refine(isUuid, 'partitionId must be a partition id (a UUID)').optional(),
  limit: queryInteger(1, 1000).optional(),
  /** the id of the last entry of the page before: the next page starts just older than it */
  before: queryInteger(1).optional(),
});

/** `details` holds the object: `{key: value}`, or a `partitions` entry with it (sql/017's vocabulary). */
const touches = (key: string, value: string | undefined) => sql`(${value ?? null}::text is null
  or details @> jsonb_build_object(${key}::text, ${value ?? null}::text)
  or details @> jsonb_build_object('partitions', jsonb_build_array(jsonb_build_object(${key}::text, ${value ?? null}::text))))`;

/**
 * The audit log, newest first by time and then id (ids are taken in commit order only roughly: a
 * long transaction's entry can carry a lower id than one committed before it), paged from the
 * newest by `before`, the last id of the page before, through the (at, id) index of sql/024; `target` matches a part of a target in any case (a lease id, a queue
 * name); `queue`, `partitionId` and `group` (exact) find the entries whose details name that
 * object, whatever their target: a lease release on a partition is found from the partition.
 */
export async function listAudit(search: URLSearchParams) {
  const f = parseWith(filters, Object.fromEntries(search), 'query');
  const limit = f.limit ?? 100;
  // The output's `id` is text: ordering by the column, not by the output, keeps 10 after 9.
  const { rows } = await db().execute<{ id: string }>(sql`
    select a.id::text, queen.iso(a.at) as at, actor, action, target_type as "targetType", target, reason, result, details
    from queen.audit_log a
    where ${containsText(sql`target`, f.target)}
      and (${f.action ?? null}::text is null or action = ${f.action ?? null})
      and (${f.actor ?? null}::text is null or actor = ${f.actor ?? null})
      and (${touches('queue', f.queue)}
           or details @> jsonb_build_object('queues', jsonb_build_array(${f.queue ?? null}::text)))
      and ${touches('partitionId', f.partitionId)}
      and ${touches('group', f.group)}
      and (${f.before ?? null}::bigint is null
           or (a.at, a.id) < (select b.at, b.id from queen.audit_log b where b.id = ${f.before ?? null}::bigint)
           -- that entry went with the retention: by id alone
           or (a.id < ${f.before ?? null}::bigint and not exists (select 1 from queen.audit_log b where b.id = ${f.before ?? null}::bigint)))
    order by a.at desc, a.id desc
    limit ${limit + 1}`);
  const more = rows.length > limit;
  const entries = more ? rows.slice(0, limit) : rows;
  return { entries, next: more ? entries[entries.length - 1].id : null };
}
