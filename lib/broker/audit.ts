import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { parseWith, queryInteger } from '@/lib/http/validate';
import { containsText } from './text-match';

export const filters = z.object({
  target: z.string().optional(),
  action: z.string().optional(),
  actor: z.string().optional(),
  limit: queryInteger(1, 1000).optional(),
  before: queryInteger(1).optional(),
});

/** The audit log, newest first; `target` matches a part of a target in any case (a lease id, a queue name). */
export async function listAudit(search: URLSearchParams) {
  const f = parseWith(filters, Object.fromEntries(search), 'query');
  const { rows } = await db().execute(sql`
    select id::text, queen.iso(at) as at, actor, action, target_type as "targetType", target, reason, result, details
    from queen.audit_log
    where ${containsText(sql`target`, f.target)}
      and (${f.action ?? null}::text is null or action = ${f.action ?? null})
      and (${f.actor ?? null}::text is null or actor = ${f.actor ?? null})
      and (${f.before ?? null}::bigint is null or id < ${f.before ?? null}::bigint)
    order by id desc
    limit ${f.limit ?? 100}`);
  return { entries: rows };
}
