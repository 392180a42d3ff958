import { z } from 'zod';
import { isUuid } from '@/lib/uuid';
import { name } from '../validate';

// The wire contracts of /streams/v1 (spec/streams.md): snake_case, except inside `ack` and
// `push_items`, which keep the ack and push names.

export const MAX_STREAM_ITEMS = 10_000;
export const MAX_STATE_KEY_BYTES = 1024;

const required = name.refine((v) => v.length > 0, 'must not be empty');
const uuid = z.string().refine(isUuid, 'must be a UUID');
const stateKey = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_STATE_KEY_BYTES, `must be at most ${MAX_STATE_KEY_BYTES} bytes`);
const atMost = <T extends z.ZodType>(item: T) =>
  z.array(item).max(MAX_STREAM_ITEMS, `at most ${MAX_STREAM_ITEMS} items`);

export const registerBody = z.object({
  name: required,
  source_queue: required,
  sink_queue: name.nullish(),
  config_hash: required,
  reset: z.boolean().nullish(),
});

export const stateGetBody = z.object({
  query_id: uuid,
  partition_id: uuid,
  keys: atMost(stateKey).nullish(),
  key_prefix: z.string().nullish(),
  ripe_at_or_before: z.number().nullish(),
});

const stateOp = z.discriminatedUnion('type', [
  z.object({ type: z.literal('upsert'), key: stateKey, value: z.unknown().optional() }),
  z.object({ type: z.literal('delete'), key: stateKey }),
]);

const pushItem = z.object({
  queue: name,
  partition: name.nullish(),
  payload: z.unknown().optional(),
  transactionId: name.nullish(),
  traceId: z.string().nullish(),
});

const ACK_STATUS = { completed: 'completed', success: 'completed', failed: 'failed', dlq: 'failed' } as const;

const ackBody = z.object({
  transactionId: name,
  leaseId: z.string({ error: 'is required' }).min(1, 'must not be empty (an autoAck pop cannot be acked by a cycle)'),
  status: z
    .enum(['completed', 'success', 'failed', 'dlq'])
    .nullish()
    .transform((s) => ACK_STATUS[s ?? 'completed']),
  error: z.string().nullish(),
});

export const cycleBody = z.object({
  query_id: uuid,
  partition_id: uuid,
  consumer_group: name.nullish(),
  state_ops: atMost(stateOp).nullish(),
  push_items: atMost(pushItem).nullish(),
  ack: ackBody.nullish(),
  release_lease: z.boolean().nullish(),
});

export type CycleBody = z.output<typeof cycleBody>;
