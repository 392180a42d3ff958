// Mirrors sql/ (the source of truth); tests/migrations.test.ts ("the Drizzle schema") checks the two agree.
import {
  bigint,
  boolean,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { IMPLICIT_QUEUE_DEFAULTS as IMPLICIT } from '../lib/broker/option-defaults';

export const queen = pgSchema('queen');

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string' });
const big = (name: string) => bigint(name, { mode: 'number' });

export const queues = queen.table('queues', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull().unique(),
  namespace: text('namespace').notNull().default(''),
  task: text('task').notNull().default(''),
  leaseTime: integer('lease_time').notNull().default(IMPLICIT.leaseTime),
  retryLimit: integer('retry_limit').notNull().default(IMPLICIT.retryLimit),
  retryDelay: integer('retry_delay').notNull().default(IMPLICIT.retryDelay),
  delayedProcessing: integer('delayed_processing').notNull().default(IMPLICIT.delayedProcessing),
  windowBuffer: integer('window_buffer').notNull().default(IMPLICIT.windowBuffer),
  minPopWaitTime: integer('min_pop_wait_time').notNull().default(IMPLICIT.minPopWaitTime),
  maxSize: integer('max_size').notNull().default(IMPLICIT.maxSize),
  ttl: integer('ttl').notNull().default(IMPLICIT.ttl),
  priority: integer('priority').notNull().default(IMPLICIT.priority),
  deadLetterQueue: boolean('dead_letter_queue').notNull().default(IMPLICIT.deadLetterQueue),
  dlqAfterMaxRetries: boolean('dlq_after_max_retries').notNull().default(IMPLICIT.dlqAfterMaxRetries),
  retentionEnabled: boolean('retention_enabled').notNull().default(IMPLICIT.retentionEnabled),
  retentionSeconds: integer('retention_seconds').notNull().default(IMPLICIT.retentionSeconds),
  completedRetentionSeconds: integer('completed_retention_seconds')
    .notNull()
    .default(IMPLICIT.completedRetentionSeconds),
  encryptionEnabled: boolean('encryption_enabled').notNull().default(IMPLICIT.encryptionEnabled),
  maxWaitTimeSeconds: integer('max_wait_time_seconds').notNull().default(IMPLICIT.maxWaitTimeSeconds),
  configured: boolean('configured').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  // sql/024
  deadLetterAfterExpiries: integer('dead_letter_after_expiries').notNull().default(IMPLICIT.deadLetterAfterExpiries),
});

export const partitions = queen.table('partitions', {
  id: uuid('id').primaryKey(),
  queueId: uuid('queue_id')
    .notNull()
    .references(() => queues.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  headOffset: big('head_offset').notNull().default(0),
  lastPushAt: ts('last_push_at'),
  retainCheckAt: ts('retain_check_at'),
  retainMisses: smallint('retain_misses').notNull().default(0),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const segments = queen.table(
  'segments',
  {
    partitionId: uuid('partition_id').notNull(),
    firstOffset: big('first_offset').notNull(),
    lastOffset: big('last_offset').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.firstOffset] })],
);

export const messages = queen.table(
  'messages',
  {
    partitionId: uuid('partition_id').notNull(),
    offset: big('offset').notNull(),
    id: uuid('id').notNull(),
    transactionId: text('transaction_id').notNull(),
    traceId: text('trace_id'),
    payload: jsonb('payload').notNull(),
    encrypted: boolean('encrypted').notNull().default(false),
    producerSub: text('producer_sub'),
    segmentOffset: big('segment_offset').notNull(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.offset] })],
);

export const cursors = queen.table(
  'cursors',
  {
    partitionId: uuid('partition_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    queueId: uuid('queue_id').notNull(),
    seeded: boolean('seeded').notNull().default(false),
    committedOffset: big('committed_offset').notNull().default(0),
    ackedOffsets: big('acked_offsets').array().notNull().default([]),
    leaseId: uuid('lease_id'),
    leaseEndOffset: big('lease_end_offset'),
    leaseAcquiredAt: ts('lease_acquired_at'),
    leaseExpiresAt: ts('lease_expires_at'),
    leaseHolder: text('lease_holder'),
    leaseSeconds: integer('lease_seconds'),
    evicted: big('evicted').notNull().default(0),
    leaseExtensions: integer('lease_extensions').notNull().default(0),
    retryNotBefore: ts('retry_not_before'),
    maxDeliveredOffset: big('max_delivered_offset').notNull().default(0),
    deliveries: big('deliveries').notNull().default(0),
    redeliveries: big('redeliveries').notNull().default(0),
    leaseExpiries: big('lease_expiries').notNull().default(0),
    failures: big('failures').notNull().default(0),
    deadLetters: big('dead_letters').notNull().default(0),
    lastClaimAt: ts('last_claim_at'),
    lastAckAt: ts('last_ack_at'),
    paused: boolean('paused').notNull().default(false),
    pausedReason: text('paused_reason'),
    pausedBy: text('paused_by'),
    pausedAt: ts('paused_at'),
    pausedUntil: ts('paused_until'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup] })],
);

/** A group of a queue: it has a cursor on every partition of the queue. */
export const queueGroups = queen.table(
  'queue_groups',
  {
    queueId: uuid('queue_id')
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup] })],
);

/** A (partition, group) with messages above its cursor, in claim order (sql/007). */
export const backlog = queen.table(
  'backlog',
  {
    partitionId: uuid('partition_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    queueId: uuid('queue_id').notNull(),
    lastClaimAt: ts('last_claim_at').notNull().default('-infinity'),
    blockedUntil: ts('blocked_until'),
    pendingSince: ts('pending_since').notNull(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup] })],
);

export const queueStats = queen.table(
  'queue_stats',
  {
    queueId: uuid('queue_id').notNull(),
    shard: smallint('shard').notNull(),
    partitions: big('partitions').notNull().default(0),
    messages: big('messages').notNull().default(0),
    deleted: big('deleted').notNull().default(0),
    bytes: big('bytes').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.shard] })],
);

export const groupStats = queen.table(
  'group_stats',
  {
    queueId: uuid('queue_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    shard: smallint('shard').notNull(),
    committed: big('committed').notNull().default(0),
    redeliveries: big('redeliveries').notNull().default(0),
    leaseExpiries: big('lease_expiries').notNull().default(0),
    failures: big('failures').notNull().default(0),
    deadLetters: big('dead_letters').notNull().default(0),
    evicted: big('evicted').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup, t.shard] })],
);

// 015: messages delivered and acked, one row per writing backend (0: folded)
export const deliveryStats = queen.table(
  'delivery_stats',
  {
    queueId: uuid('queue_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    backend: integer('backend').notNull(),
    delivered: big('delivered').notNull().default(0),
    acked: big('acked').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup, t.backend] })],
);

export const statsSamples = queen.table(
  'stats_samples',
  {
    at: ts('at').notNull(),
    queueId: uuid('queue_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    pushed: big('pushed').notNull(),
    delivered: big('delivered').notNull(),
    acked: big('acked').notNull(),
    failed: big('failed').notNull(),
    lag: big('lag').notNull(),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup, t.at] })],
);

export const holderStats = queen.table(
  'holder_stats',
  {
    minute: ts('minute').notNull(),
    holder: text('holder').notNull(),
    backend: integer('backend').notNull(),
    acked: big('acked').notNull().default(0),
    failed: big('failed').notNull().default(0),
    expired: big('expired').notNull().default(0),
    lastSeenAt: ts('last_seen_at'),
    // leases of its an operator ended (sql/024)
    released: big('released').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.minute, t.holder, t.backend] })],
);

// the holders seen claiming for each (queue, group) lately (sql/024)
export const groupMembers = queen.table(
  'group_members',
  {
    queueId: uuid('queue_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    holder: text('holder').notNull(),
    backend: integer('backend').notNull(),
    seenAt: ts('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup, t.holder, t.backend] })],
);

export const instances = queen.table('instances', {
  id: text('id').primaryKey(),
  startedAt: ts('started_at').notNull().defaultNow(),
  seenAt: ts('seen_at').notNull().defaultNow(),
  liveViewers: boolean('live_viewers').notNull().default(false),
  // its process figures, written with its heartbeat (sql/032)
  facts: jsonb('facts'),
});

// what the server knows of a holder's pop requests, per minute and instance (sql/032)
export const holderClients = queen.table(
  'holder_clients',
  {
    minute: ts('minute').notNull(),
    holder: text('holder').notNull(),
    instance: text('instance').notNull(),
    address: text('address'),
    userAgent: text('user_agent'),
    pops: big('pops').notNull().default(0),
    emptyPops: big('empty_pops').notNull().default(0),
    lastPopAt: ts('last_pop_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.minute, t.holder, t.instance] })],
);

export const messageAttempts = queen.table(
  'message_attempts',
  {
    partitionId: uuid('partition_id')
      .notNull()
      .references(() => partitions.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    offset: big('offset').notNull(),
    deliveries: integer('deliveries').notNull().default(1),
    failures: integer('failures').notNull().default(0),
    lastError: text('last_error'),
    lastDeliveredAt: ts('last_delivered_at'),
    lastFailedAt: ts('last_failed_at'),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup, t.offset] })],
);

export const deadLetters = queen.table(
  'dead_letters',
  {
    partitionId: uuid('partition_id')
      .notNull()
      .references(() => partitions.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    offset: big('offset').notNull(),
    errorMessage: text('error_message'),
    retryCount: integer('retry_count').notNull(),
    failedAt: ts('failed_at').notNull().defaultNow(),
    // a copy of the message, kept when the message is removed (sql/021)
    messageId: uuid('message_id'),
    transactionId: text('transaction_id'),
    traceId: text('trace_id'),
    payload: jsonb('payload'),
    encrypted: boolean('encrypted'),
    producerSub: text('producer_sub'),
    createdAt: ts('created_at'),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup, t.offset] })],
);

/** Transaction ids of removed messages, remembered for the dedup window (sql/021). */
export const removedTransactions = queen.table(
  'removed_transactions',
  {
    transactionId: text('transaction_id').notNull(),
    partitionId: uuid('partition_id').notNull(),
    messageId: uuid('message_id').notNull(),
    forgetAt: ts('forget_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.transactionId, t.partitionId] })],
);

/** The error of every failed attempt of a message in a group (sql/018); it goes with its message. */
export const attemptErrors = queen.table(
  'attempt_errors',
  {
    partitionId: uuid('partition_id')
      .notNull()
      .references(() => partitions.id, { onDelete: 'cascade' }),
    offset: big('offset').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    attempt: integer('attempt').notNull(),
    error: text('error'),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.offset, t.consumerGroup, t.attempt] })],
);

/** The dead letters that exist now per partition and group (sql/018, kept by triggers). */
export const deadLetterCounts = queen.table(
  'dead_letter_counts',
  {
    partitionId: uuid('partition_id')
      .notNull()
      .references(() => partitions.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    n: big('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup] })],
);

export const subscriptions = queen.table(
  'subscriptions',
  {
    queueId: uuid('queue_id')
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    mode: text('mode').notNull(),
    startAt: ts('start_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.consumerGroup] })],
);

/** A group's subscription to a namespace/task, adopted by queues of it created later (sql/011). */
export const scopeSubscriptions = queen.table(
  'scope_subscriptions',
  {
    namespace: text('namespace').notNull(),
    task: text('task').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    mode: text('mode').notNull(),
    startAt: ts('start_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.task, t.consumerGroup] })],
);

export const systemState = queen.table('system_state', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** A trace event a consumer recorded for a message (sql/014); it goes with its message. */
export const traces = queen.table('traces', {
  id: uuid('id').primaryKey(),
  partitionId: uuid('partition_id').notNull(),
  offset: big('offset').notNull(),
  transactionId: text('transaction_id').notNull(),
  consumerGroup: text('consumer_group').notNull(),
  eventType: text('event_type').notNull(),
  data: jsonb('data').notNull(),
  names: text('names').array().notNull().default([]),
  createdAt: ts('created_at').notNull().defaultNow(),
});

// every delivery of a span to a group and how it ended (sql/024)
export const deliveries = queen.table('deliveries', {
  id: big('id').primaryKey().generatedAlwaysAsIdentity(),
  partitionId: uuid('partition_id').notNull(),
  consumerGroup: text('consumer_group').notNull(),
  leaseId: uuid('lease_id'),
  fromOffset: big('from_offset').notNull(),
  toOffset: big('to_offset').notNull(),
  holder: text('holder'),
  claimedAt: ts('claimed_at').notNull(),
  expiresAt: ts('expires_at'),
  extensions: integer('extensions'),
  extendedAt: ts('extended_at'),
  endedAt: ts('ended_at'),
  ended: text('ended'),
});

export const auditLog = queen.table('audit_log', {
  id: big('id').primaryKey().generatedAlwaysAsIdentity(),
  at: ts('at').notNull().defaultNow(),
  actor: text('actor').notNull(),
  action: text('action').notNull(),
  targetType: text('target_type').notNull(),
  target: text('target').notNull(),
  reason: text('reason'),
  result: text('result').notNull(),
  details: jsonb('details').notNull().default({}),
});

export const migrations = queen.table('migrations', {
  version: text('version').primaryKey(),
  checksum: text('checksum').notNull(),
  appliedAt: ts('applied_at').notNull().defaultNow(),
});

// The Streams API (sql/023_streams.sql).
export const queenStreams = pgSchema('queen_streams');

export const streamQueries = queenStreams.table('queries', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull().unique(),
  sourceQueue: text('source_queue').notNull(),
  sinkQueue: text('sink_queue'),
  configHash: text('config_hash').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const streamState = queenStreams.table(
  'state',
  {
    queryId: uuid('query_id')
      .notNull()
      .references(() => streamQueries.id, { onDelete: 'cascade' }),
    partitionId: uuid('partition_id').notNull(),
    key: text('key').notNull(),
    value: jsonb('value').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.queryId, t.partitionId, t.key] })],
);

export const streamShards = queenStreams.table(
  'shards',
  {
    queryId: uuid('query_id')
      .notNull()
      .references(() => streamQueries.id, { onDelete: 'cascade' }),
    partitionId: uuid('partition_id').notNull(),
    consumerGroup: text('consumer_group'),
    cycles: big('cycles').notNull().default(0),
    refused: big('refused').notNull().default(0),
    stateKeys: big('state_keys').notNull().default(0),
    stateBytes: big('state_bytes').notNull().default(0),
    lastCycleAt: ts('last_cycle_at'),
    lastRefusedAt: ts('last_refused_at'),
    lastRefusal: text('last_refusal'),
  },
  (t) => [primaryKey({ columns: [t.queryId, t.partitionId] })],
);

/** With auth on, the subject of the token that took a cursor's lease (sql/022); counts while leaseId is the cursor's. */
export const leaseSubjects = queen.table(
  'lease_subjects',
  {
    partitionId: uuid('partition_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    leaseId: uuid('lease_id').notNull(),
    subject: text('subject').notNull(),
  },
  (t) => [primaryKey({ columns: [t.partitionId, t.consumerGroup] })],
);
