import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { retryingConflicts } from '../conflicts';
import { badRequest, notFound } from '../errors';
import { parseWith, reasonText } from '../validate';

export const resetBody = z.object({ reason: reasonText });

/**
 * The dashboard's reset of a streaming query: every state row of every partition goes, audited
 * (streams.reset). The query, its hash and its consumer group's cursors stay.
 */
export async function resetQueryState(queryId: string, body: unknown, actor: string) {
  const reason = parseWith(resetBody, body ?? {}).reason?.trim();
  if (!reason) throw badRequest('reason: is required (it goes to the audit log)');
  if (!isUuid(queryId)) throw notFound('streaming query not found');
  const { rows } = await retryingConflicts(() =>
    db().execute<{ r: Record<string, unknown> | null }>(
      sql`select queen_streams.reset_state(${queryId}::uuid, ${reason}, ${actor}) as r`,
    ),
  );
  if (!rows[0].r) throw notFound('streaming query not found');
  return { reset: true, ...rows[0].r };
}
