import { z } from 'zod';
import { db } from '@/db/pool';
import { uuidv7 } from '@/lib/uuid';
import { ack, ackItem, releasedQueues, type AckItem, type AckResult } from './ack';
import { withEncryptionFlags } from './encryption-flags';
import { prepareItems, pushItems, scopesOf, type ItemInput, type Pushed } from './push';
import { name, parseWith } from './validate';
import { wakeLocal } from './waiters';
import { retryingConflicts } from './conflicts';

const pushItem = z.object({
  queue: name,
  partition: name.optional(),
  payload: z.unknown().optional(),
  transactionId: name.optional(),
  traceId: z.string().nullish(),
});

export const transactionBody = z.object({
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
  | {
      index: number;
      type: 'push';
      success: true;
      transactionId: string;
      messageId: string;
      partitionId: string;
      queueName: string;
    }
  | { index: number; type: 'ack'; success: boolean; transactionId: string; error: string | null; dlq: boolean };

class RolledBack extends Error {}

/**
 * Runs the operations in one database transaction: all commit or none. A push item is one result
 * (operations are flattened, as Queen MQ does). Every pushed item goes in one push call, so its
 * locks are taken in one global order; then the acks are judged together, as one batch ack is
 * (DESIGN §4): `[m1 failed, m2 completed]` on one lease means what the reverse order means. A
 * message pushed in the transaction cannot be leased in it, so nothing depends on that order. An
 * ack that fails rolls everything back.
 */
export async function runTransaction(body: unknown, producerSub: string | null) {
  const { operations } = parseWith(transactionBody, body);
  const transactionId = uuidv7();
  const slots: ({ push: number } | { ack: number })[] = [];
  const items: ItemInput[] = [];
  const acks: AckItem[] = [];
  for (const op of operations) {
    if (op.type === 'push') for (const item of op.items) slots.push({ push: items.push(item) - 1 });
    else slots.push({ ack: acks.push(op) - 1 });
  }
  let pushed: Pushed[] = [];
  let acked: AckResult[] = [];
  const resultsSoFar = (): Result[] =>
    slots.flatMap((slot, index): Result[] => {
      if ('push' in slot) {
        const r = pushed[slot.push];
        return r
          ? [
              {
                index,
                type: 'push',
                success: true,
                transactionId: r.transaction_id,
                messageId: r.message_id,
                partitionId: r.partition_id,
                queueName: r.queueName,
              },
            ]
          : [];
      }
      const r = acked[slot.ack];
      return r
        ? [{ index, type: 'ack', success: r.success, transactionId: r.transactionId, error: r.error, dlq: r.dlq }]
        : [];
    });
  try {
    await retryingConflicts(() =>
      withEncryptionFlags((encrypted) =>
        db().transaction(async (tx) => {
          pushed = items.length ? await pushItems(tx, prepareItems(items, producerSub), encrypted) : [];
          acked = acks.length ? await ack(tx, acks) : [];
          const failed = acked.find((r) => !r.success);
          if (failed) throw new RolledBack(`ack of ${JSON.stringify(failed.transactionId)} failed: ${failed.error}`);
        }),
      ),
    );
  } catch (err) {
    if (err instanceof RolledBack)
      return { transactionId, success: false, error: err.message, results: resultsSoFar() };
    throw err;
  }
  wakeLocal([...scopesOf(pushed), ...releasedQueues(acked)]);
  return { transactionId, success: true, results: resultsSoFar() };
}
