import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { notFound } from './errors';
import { queryReason } from './validate';
import { wakeLocal } from './waiters';

/**
 * Deletes one message with its traces, attempts and dead letters (sql/014: groups that had not
 * consumed it pass it; inside a live lease it counts as acked). `?reason=` goes to the audit log.
 */
export async function deleteMessage(
  partitionId: string,
  transactionId: string,
  search: URLSearchParams,
  actor: string,
) {
  const reason = queryReason(search);
  if (!isUuid(partitionId)) throw notFound('message not found');
  const { rows } = await db().execute<{ done: { queue: string } | null }>(
    sql`select queen.delete_message(${partitionId}::uuid, ${transactionId}, ${reason}, ${actor}) as done`,
  );
  if (rows[0].done === null) throw notFound('message not found');
  // a lease it completed leaves the rest of the partition claimable
  wakeLocal([rows[0].done.queue]);
  return { success: true, partitionId, transactionId };
}
