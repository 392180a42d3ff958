import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db, type Executor, executePrepared } from '@/db/pool';
import { name, parseWith } from './validate';
import { isUuid } from '@/lib/uuid';
import { wakeLocal } from './waiters';
import { retryingConflicts } from './conflicts';

export const ackItem = z.object({
  transactionId: name,
  partitionId: z.string(),
  status: z.enum(['completed', 'failed']).nullish(),
  error: z.string().nullish(),
  leaseId: z.string().nullish(),
  consumerGroup: name.nullish(),
});
export type AckItem = z.output<typeof ackItem>;

export const batchBody = z.object({ acknowledgments: z.array(ackItem), consumerGroup: name.nullish() });

export interface AckResult {
  index: number;
  transactionId: string;
  success: boolean;
  error: string | null;
  queueName: string | null;
  partitionName: string | null;
  leaseReleased: boolean;
  dlq: boolean;
}

type AckRow = {
  idx: number;
  transaction_id: string;
  success: boolean;
  error: string | null;
  queue_name: string | null;
  partition_name: string | null;
  lease_released: boolean;
  dlq: boolean;
};

// Never a lease id: a malformed one can only be refused, like any lease that is not the live one.
const NO_LEASE = '00000000-0000-0000-0000-000000000000';

/** Items as queen.ack() takes them: ids that are not UUIDs can match nothing, so they become so. */
function forSql(item: AckItem, group: string | null | undefined) {
  return {
    transactionId: item.transactionId,
    partitionId: isUuid(item.partitionId) ? item.partitionId : null,
    status: item.status ?? 'completed',
    error: item.error ?? null,
    leaseId: !item.leaseId ? null : isUuid(item.leaseId) ? item.leaseId : NO_LEASE,
    consumerGroup: group || null,
  };
}

export async function ack(exec: Executor, items: AckItem[], batchGroup?: string | null): Promise<AckResult[]> {
  const payload = items.map((i) => forSql(i, batchGroup || i.consumerGroup));
  const { rows } = await executePrepared<AckRow>(
    exec,
    sql`select * from queen.ack(${JSON.stringify(payload)}::jsonb, null)`,
  );
  return rows.map((r) => ({
    index: r.idx,
    transactionId: r.transaction_id,
    success: r.success,
    error: r.error,
    queueName: r.queue_name,
    partitionName: r.partition_name,
    leaseReleased: r.lease_released,
    dlq: r.dlq,
  }));
}

/** The queues where an ack released a lease: what is left of its span is claimable again. */
export const releasedQueues = (results: AckResult[]) => [
  ...new Set(results.filter((r) => r.leaseReleased && r.queueName !== null).map((r) => r.queueName as string)),
];

export async function ackOne(body: unknown): Promise<AckResult[]> {
  const item = parseWith(ackItem, body);
  const results = await retryingConflicts(() => ack(db(), [item]));
  wakeLocal(releasedQueues(results));
  return results;
}

export async function ackBatch(body: unknown): Promise<AckResult[]> {
  const { acknowledgments, consumerGroup } = parseWith(batchBody, body);
  if (acknowledgments.length === 0) return [];
  const results = await retryingConflicts(() => ack(db(), acknowledgments, consumerGroup));
  wakeLocal(releasedQueues(results));
  return results;
}
