// The SQL contract of the previous landed release, 0.1.0 (commit 8dd965a): every `queen.` function
// its lib/ calls, with the argument count and the exact SQL text it sends (through drizzle, so every
// parameter untyped unless the text casts it). An instance of 0.1.0 still running during a rolling
// upgrade sends exactly these against a database this release has migrated. Hard-coded on purpose:
// this is what is out there, whatever the code of this release becomes.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/** name → argument count, as 0.1.0 calls them (`git grep -E "queen\.[a-z_]+\(" 8dd965a -- lib`). */
export const CONTRACT_0_1_0: Record<string, number> = {
  ack: 2,
  configure_queue: 4,
  delete_consumer_group: 5,
  delete_message: 4,
  delete_queue: 1,
  discard_dead_letters: 3,
  extend_lease: 2,
  fold_delivery_stats: 0,
  group_figures: 0,
  heartbeat: 2,
  iso: 1,
  metric_figures: 0,
  move_subscriptions: 3,
  pending_since: 2,
  pop: 14,
  pop_empty_reason: 3,
  pop_maintenance: 0,
  push: 1,
  queue_figures: 0,
  queue_options: 1,
  release_lease: 3,
  requeue_dead_letters: 3,
  run_lifecycle: 5, // a procedure: `call queen.run_lifecycle(...)`
  sample_stats: 3,
  seek: 6,
  seek_partition: 7,
  seek_preview: 5,
  set_pause: 6,
  set_pop_maintenance: 3,
  set_subscription: 5,
};

export const QUEUE_MODE = '__QUEUE_MODE__';

/** The full option set 0.1.0's configure sends (lib/broker/options.ts defaults). */
const OPTIONS_0_1_0 = {
  leaseTime: 300,
  retryLimit: 3,
  retryDelay: 1000,
  delayedProcessing: 0,
  windowBuffer: 0,
  minPopWaitTime: 0,
  maxSize: 0,
  ttl: 3600,
  priority: 0,
  deadLetterQueue: false,
  dlqAfterMaxRetries: false,
  retentionEnabled: false,
  retentionSeconds: 0,
  completedRetentionSeconds: 0,
  encryptionEnabled: false,
  maxWaitTimeSeconds: 0,
};

/** A 0.1.0 push item (lib/broker/push.ts prepareItems). */
export const pushItem = (queue: string, partition: string, transactionId: string, payload: unknown = {}) => ({
  queue,
  partition,
  payload,
  transactionId,
  messageId: randomUUID(),
  producerSub: null,
  traceId: null,
});

/** The calls of 0.1.0 as it sends them: SQL text and values. */
export const calls = {
  push: (items: unknown[]) => ['select * from queen.push($1::jsonb)', [JSON.stringify(items)]] as const,
  pop: (o: {
    queue: string | null;
    partition?: string | null;
    namespace?: string | null;
    task?: string | null;
    group?: string;
    batch?: number;
    partitions?: number;
    leaseId: string;
    holder?: string;
  }) =>
    [
      `select * from queen.pop(
        $1::text, $2::text, $3, $4,
        $5, $6::integer, $7::integer,
        $8::boolean, $9::integer, $10::uuid, $11,
        $12::timestamptz, $13, $14::boolean)`,
      [
        o.queue,
        o.partition ?? null,
        o.namespace ?? null,
        o.task ?? null,
        o.group ?? QUEUE_MODE,
        o.batch ?? 10,
        o.partition ? 1 : (o.partitions ?? 1),
        false,
        0,
        o.leaseId,
        'all',
        null,
        o.holder ?? 'release-0.1.0',
        false,
      ],
    ] as const,
  popEmptyReason: (queue: string, partition: string | null, group: string) =>
    ['select queen.pop_empty_reason($1, $2::text, $3) as reason', [queue, partition, group]] as const,
  ack: (
    items: {
      transactionId: string;
      partitionId: string;
      leaseId: string | null;
      status?: string;
      error?: string | null;
      consumerGroup?: string | null;
    }[],
  ) =>
    [
      'select * from queen.ack($1::jsonb, null)',
      [JSON.stringify(items.map((i) => ({ status: 'completed', error: null, consumerGroup: null, ...i })))],
    ] as const,
  extendLease: (leaseId: string, seconds: number) =>
    ['select * from queen.extend_lease($1::uuid, $2::integer)', [leaseId, seconds]] as const,
  releaseLease: (leaseId: string) =>
    ['select * from queen.release_lease($1::uuid, $2, $3)', [leaseId, 'rolling upgrade', 'release-0.1.0']] as const,
  heartbeat: (id: string) => ['select queen.heartbeat($1, $2), queen.fold_delivery_stats()', [id, false]] as const,
  sampleStats: () =>
    [
      'select queen.sample_stats(make_interval(secs => $1), make_interval(hours => $2), coalesce($3::timestamptz, now())) as sampled',
      [15, 24, null],
    ] as const,
  runLifecycle: (instanceId: string) =>
    ['call queen.run_lifecycle($1, $2, $3, $4, $5)', [200, 90, 30, instanceId, 60000]] as const,
  configure: (queue: string) =>
    [
      'select * from queen.configure_queue($1, $2, $3, $4::jsonb)',
      [queue, 'ns', 'task', JSON.stringify({ ...OPTIONS_0_1_0, leaseTime: 60, retryLimit: 1 })],
    ] as const,
  popMaintenance: () => ['select queen.pop_maintenance() as on', []] as const,
  setPopMaintenance: (on: boolean) =>
    ['select queen.set_pop_maintenance($1, $2, $3) as on', [on, null, 'release-0.1.0']] as const,
  setPause: (partitionId: string, group: string, paused: boolean) =>
    [
      'select queen.set_pause($1::uuid, $2, $3, $4, $5::timestamptz, $6) as done',
      [partitionId, group, paused, null, null, 'release-0.1.0'],
    ] as const,
  setSubscription: (queue: string, group: string) =>
    [
      'select * from queen.set_subscription($1, $2, $3, $4::timestamptz, $5)',
      [queue, group, 'all', null, 'release-0.1.0'],
    ] as const,
  moveSubscriptions: (group: string) =>
    [
      'select queen.move_subscriptions($1, $2::timestamptz, $3) as n',
      [group, new Date().toISOString(), 'release-0.1.0'],
    ] as const,
  seek: (group: string, queue: string) =>
    [
      'select queen.seek($1, $2, $3, $4::timestamptz, $5, $6) as n',
      [group, queue, true, null, 'rolling upgrade', 'release-0.1.0'],
    ] as const,
  seekPartition: (group: string, queue: string, partition: string) =>
    [
      'select queen.seek_partition($1, $2, $3, $4, $5::timestamptz, $6, $7)::float8 as to',
      [group, queue, partition, true, null, 'rolling upgrade', 'release-0.1.0'],
    ] as const,
  seekPreview: (group: string, queue: string) =>
    ['select * from queen.seek_preview($1, $2, $3, $4, $5::timestamptz)', [group, queue, null, true, null]] as const,
  deleteConsumerGroup: (group: string, queue: string | null) =>
    [
      'select queen.delete_consumer_group($1, $2, $3, $4, $5) as n',
      [group, queue, true, null, 'release-0.1.0'],
    ] as const,
  requeueDeadLetters: (keys: unknown[]) =>
    [
      'select queen.requeue_dead_letters($1::jsonb, $2, $3) as results',
      [JSON.stringify(keys), 'rolling upgrade', 'release-0.1.0'],
    ] as const,
  discardDeadLetters: (keys: unknown[]) =>
    [
      'select queen.discard_dead_letters($1::jsonb, $2, $3) as results',
      [JSON.stringify(keys), 'rolling upgrade', 'release-0.1.0'],
    ] as const,
  deleteMessage: (partitionId: string, transactionId: string) =>
    [
      'select queen.delete_message($1::uuid, $2, $3, $4) as done',
      [partitionId, transactionId, null, 'release-0.1.0'],
    ] as const,
  deleteQueue: (queue: string) => ['select queen.delete_queue($1) as existed', [queue]] as const,
  figures: () =>
    [
      `select (select count(*) from queen.group_figures())::int as groups, (select count(*) from queen.queue_figures())::int as queues,
              (select count(*) from queen.metric_figures())::int as metrics, queen.iso(now()) as now`,
      [],
    ] as const,
  queueOptions: (queue: string) =>
    ['select queen.queue_options(q) as options from queen.queues q where q.name = $1', [queue]] as const,
  pendingSince: (queue: string) =>
    [
      'select queen.pending_since(p.id, 0) as since from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1',
      [queue],
    ] as const,
};

export type Call = readonly [string, readonly unknown[]];

/**
 * 0.1.0 runs these again, up to 4 attempts, when PostgreSQL makes them a deadlock victim or fails
 * their serialization (its lib/broker/conflicts.ts retryingConflicts): nothing of a failed attempt
 * was written. Its other calls surface those errors.
 */
export const RETRIED_0_1_0 = new Set([
  'push',
  'pop',
  'ack',
  'extend_lease',
  'release_lease',
  'requeue_dead_letters',
  'discard_dead_letters',
]);

/** A call as 0.1.0 makes it: `run`, with 0.1.0's retries where it had them. */
export async function runAs010(pool: pg.Pool, fn: string, call: Call): ReturnType<typeof run> {
  for (let attempt = 1; ; attempt++) {
    const r = await run(pool, call);
    if (!('error' in r) || !RETRIED_0_1_0.has(fn) || attempt >= 4 || !['40P01', '40001'].includes(r.code)) return r;
    await new Promise((resolve) => setTimeout(resolve, attempt * 5 + Math.random() * 20));
  }
}

/** Runs one call; the row set, or the error PostgreSQL answered. */
export async function run(
  pool: pg.Pool,
  [text, values]: Call,
): Promise<{ rows: Record<string, unknown>[]; fields: string[] } | { error: string; code: string }> {
  try {
    const r = await pool.query(text, values as unknown[]);
    return { rows: r.rows, fields: r.fields.map((f) => f.name) };
  } catch (err) {
    const e = err as { message: string; code?: string };
    return { error: e.message, code: e.code ?? '' };
  }
}
