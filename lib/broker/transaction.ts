import { z } from 'zod';
import { db } from '@/db/pool';
import { name, parseWith } from '@/lib/http/validate';
import { uuidv7 } from '@/lib/uuid';
import { ack, ackItem, releasedQueues, type AckItem, type AckResult } from './ack';
import { withEncryptionFlags } from './encryption-flags';
import { prepareItems, pushItems, scopesOf, type Pushed } from './push';
import { wakeLocal } from './waiters';

const pushItem = z.object({
  queue: name,
  partition: name.optional(),
  payload: z.unknown().optional(),
  transactionId: name.optional(),
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
 * Runs the operations in one database transaction: all commit or none. A push item is one result
 * (operations are flattened, as Queen MQ does). The acks are judged together, as one batch ack is
 * (DESIGN §4), after the pushes: `[m1 failed, m2 completed]` on one lease means what the reverse
 * order means. An ack that fails rolls everything back.
 */
export async function runTransaction(body: unknown, producerSub: string | null) {
  const { operations } = parseWith(transactionBody, body);
  const transactionId = uuidv7();
  let results: Result[] = [];
  let pushed: Pushed[] = [];
  let acked: AckResult[] = [];
  try {
    await withEncryptionFlags((encrypted) => {
      results = [];
      pushed = [];
      acked = [];
      return db().transaction(async (tx) => {
        const acks: { at: number; op: AckItem }[] = [];
        for (const op of operations) {
          if (op.type === 'push') {
            for (const r of await pushItems(tx, prepareItems(op.items, producerSub), encrypted)) {
              pushed.push(r);
              results.push({ index: results.length, type: 'push', success: true, transactionId: r.transaction_id, messageId: r.message_id, partitionId: r.partition_id, queueName: r.queueName });
            }
          } else {
            acks.push({ at: results.length, op });
            results.push({ index: results.length, type: 'ack', success: false, transactionId: op.transactionId, error: null, dlq: false });
          }
        }
        if (acks.length === 0) return;
        acked = await ack(tx, acks.map((a) => a.op));
        acked.forEach((r, i) => {
          results[acks[i].at] = { index: acks[i].at, type: 'ack', success: r.success, transactionId: r.transactionId, error: r.error, dlq: r.dlq };
        });
        const failed = acked.find((r) => !r.success);
        if (failed) throw new RolledBack(`ack of ${JSON.stringify(failed.transactionId)} failed: ${failed.error}`);
      });
    });
  } catch (err) {
    if (err instanceof RolledBack) return { transactionId, success: false, error: err.message, results };
    throw err;
  }
  wakeLocal([...scopesOf(pushed), ...releasedQueues(acked)]);
  return { transactionId, success: true, results };
}
