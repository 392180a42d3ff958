import { z } from 'zod';
import { db } from '@/db/pool';
import { parseWith } from '@/lib/http/validate';
import { uuidv7 } from '@/lib/uuid';
import { ack, ackItem, releasedQueues, type AckResult } from './ack';
import { withEncryptionFlags } from './encryption-flags';
import { prepareItems, pushItems, scopesOf, type Pushed } from './push';
import { wakeLocal } from './waiters';

const pushItem = z.object({
  queue: z.string(),
  partition: z.string().optional(),
  payload: z.unknown().optional(),
  transactionId: z.string().optional(),
  traceId: z.string().nullish(),
});

const transactionBody = z.object({
  operations: z
    .array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('push'), items: z.array(pushItem).min(1) }),
        ackItem.extend({ type: z.literal('ack') }),
      ]),
    )
    .min(1, 'must not be empty'),
});

type Result =
  | { index: number; type: 'push'; success: true; transactionId: string; messageId: string; partitionId: string; queueName: string }
  | { index: number; type: 'ack'; success: boolean; transactionId: string; error: string | null; dlq: boolean };

class RolledBack extends Error {}

/**
 * Runs the operations in order in one database transaction: all commit or none. A push item is
 * one result (operations are flattened, as Queen MQ does); an ack that fails rolls everything back.
 */
export async function runTransaction(body: unknown, producerSub: string | null) {
  const { operations } = parseWith(transactionBody, body);
  const transactionId = uuidv7();
  let results: Result[] = [];
  const pushed: Pushed[] = [];
  const acked: AckResult[] = [];
  try {
    await withEncryptionFlags((encrypted) => {
      results = [];
      return db().transaction(async (tx) => {
        for (const op of operations) {
          if (op.type === 'push') {
            for (const r of await pushItems(tx, prepareItems(op.items, producerSub), encrypted)) {
              pushed.push(r);
              results.push({ index: results.length, type: 'push', success: true, transactionId: r.transaction_id, messageId: r.message_id, partitionId: r.partition_id, queueName: r.queueName });
            }
          } else {
            const [r] = await ack(tx, [op]);
            acked.push(r);
            results.push({ index: results.length, type: 'ack', success: r.success, transactionId: r.transactionId, error: r.error, dlq: r.dlq });
            if (!r.success) throw new RolledBack(`ack of ${JSON.stringify(op.transactionId)} failed: ${r.error}`);
          }
        }
      });
    });
  } catch (err) {
    if (err instanceof RolledBack) return { transactionId, success: false, error: err.message, results };
    throw err;
  }
  wakeLocal([...scopesOf(pushed), ...releasedQueues(acked)]);
  return { transactionId, success: true, results };
}
