// The OpenAPI 3.1 description of every route, served at GET /api/v1/openapi.json. Operations are
// keyed exactly as the access table (lib/http/access.ts) and tests/openapi.test.ts fails when the
// two disagree. Request bodies and query strings come from the zod schemas the routes validate
// with (z.toJSONSchema, input side), success answers from lib/http/responses.ts (output side);
// what no schema covers is declared here from the contract.
import { z } from 'zod';
import { ackItem, batchBody } from '@/lib/broker/ack';
import { filters as auditQuery } from '@/lib/broker/audit';
import { configureBody } from '@/lib/broker/configure';
import { seekBody, subscriptionBody } from '@/lib/broker/consumer-groups';
import { deadLetterActionBody } from '@/lib/broker/dead-letter-actions';
import { seekPreviewQuery } from '@/lib/broker/seek-preview';
import { filters as deadLetterQuery } from '@/lib/broker/dead-letters';
import { lagQuery } from '@/lib/broker/lagging';
import { bulkReleaseBody, extendBody, listFilters as leaseQuery, releaseBody } from '@/lib/broker/leases';
import { setAsideBody } from '@/lib/broker/set-aside';
import { filters as messageQuery } from '@/lib/broker/list-messages';
import { pauseBody } from '@/lib/broker/pause';
import { maintenanceBody } from '@/lib/broker/pop-maintenance';
import { popQuery } from '@/lib/broker/pop-params';
import { pushBody } from '@/lib/broker/push';
import { namePage, traceBody } from '@/lib/broker/traces';
import { transactionBody } from '@/lib/broker/transaction';
import { cycleBody, registerBody, stateGetBody } from '@/lib/broker/streams/contracts';
import { resetBody } from '@/lib/broker/streams/reset';
import { reasonText } from '@/lib/broker/validate';
import { browseQuery } from '@/lib/dashboard/browse';
import { consumersQuery } from '@/lib/dashboard/consumers';
import { groupsQuery } from '@/lib/dashboard/groups';
import { activityQuery, recentQuery } from '@/lib/dashboard/activity';
import { searchQuery } from '@/lib/dashboard/find-by-id';
import { streamsQuery } from '@/lib/dashboard/streams';
import { popTargetQuery } from '@/lib/dashboard/pop-target';
import { params as queuePageQuery } from '@/lib/dashboard/queue';
import { trendsQuery } from '@/lib/dashboard/trends';
import pkg from '@/package.json';
import { ACCESS, type Level } from './access';
import { RESPONSES } from './responses';
import { signInBody } from './session';

type JsonSchema = Record<string, unknown>;

interface Param {
  name: string;
  description?: string;
  schema?: JsonSchema;
  required?: boolean;
}

interface Operation {
  summary: string;
  tag: string;
  description?: string;
  /** The zod object the route parses its query string with. */
  query?: z.ZodType;
  /** Query parameters no zod object covers (read with searchParams.get), or descriptions of those it does. */
  params?: Param[];
  body?: z.ZodType;
  /** A body the route accepts; tests/openapi.test.ts sends it. */
  example?: unknown;
  /** Whether the body may be left out. */
  optionalBody?: boolean;
  /** Status → what it means, beyond those every route of its kind shares (see commonResponses). */
  responses: Record<number, string>;
  /** The 2xx content type when not JSON. */
  produces?: string;
}

const str: JsonSchema = { type: 'string' };
const int: JsonSchema = { type: 'string', pattern: '^-?\\d+$' };

const POP_PARAMS: Param[] = [
  { name: 'batch', description: 'Total message budget for the call, shared across partitions. Default 200.' },
  {
    name: 'partitions',
    description:
      'How many partitions one call may claim; 0 or less: no cap. Default 1. Ignored by the single-partition route.',
  },
  {
    name: 'autoAck',
    description:
      'Commit the cursor inside the pop (at-most-once); the response then has an empty leaseId. Default false.',
  },
  { name: 'wait', description: 'Long-poll until messages arrive or `timeout` passes. Default false.' },
  {
    name: 'timeout',
    description:
      'Long-poll deadline in ms (with wait=true). Default DEFAULT_TIMEOUT, else POP_DEFAULT_TIMEOUT_MS, else 30000.',
  },
  {
    name: 'leaseSeconds',
    description:
      "Lease for this call; 0 or less: the queue's leaseTime (60 for an implicit queue, 300 once configured).",
  },
  { name: 'consumerGroup', description: 'The group; default __QUEUE_MODE__ (queue mode).' },
  { name: 'subscriptionMode', description: '`all` (default) or `new`: seeds a cursor that does not exist yet.' },
  { name: 'subscriptionFrom', description: '`now` or an ISO-8601 timestamp: seeds a cursor that does not exist yet.' },
  { name: 'namespace', description: 'Discovery route: queues of this namespace.' },
  { name: 'task', description: 'Discovery route: queues of this task.' },
];

const POP_RESPONSES = {
  200: 'At least one message delivered: {success, queue, partition, partitionId, leaseId, consumerGroup, messages[], partitionsClaimed}',
  204: 'Nothing delivered, pop maintenance on, or a stored-procedure error: no body (X-Queen-Empty says which)',
  400: 'A query parameter that fails to parse',
};

const DELETE_REASON: Param = {
  name: 'reason',
  schema: z.toJSONSchema(reasonText, { io: 'input', unrepresentable: 'any' }),
  description: 'Recorded in the audit log (at most 500 characters).',
};

const SEEK_EXAMPLE = { toEnd: true, reason: 'skip the backlog' };

export const OPERATIONS: Record<string, Operation> = {
  // ---- system, health and metrics
  'GET /health': {
    tag: 'health and metrics',
    summary: 'Liveness and database reachability',
    responses: {
      200: '{"status":"healthy","database":"connected"}',
      503: '{"status":"unhealthy","database":"disconnected"}',
    },
  },
  'GET /ready': {
    tag: 'health and metrics',
    summary: 'Readiness: boot done, every migration and function file of this release applied, the database answering',
    responses: {
      200: '{"status":"ready","migrations":"applied","database":"connected"}',
      503: '{"status":"not ready","reason":"booting"|"shutting down"|"database unreachable"|"not applied: ..."}',
    },
  },
  'GET /metrics/prometheus': {
    tag: 'health and metrics',
    summary: 'Prometheus metrics',
    produces: 'text/plain',
    responses: { 200: 'Prometheus text exposition format' },
  },
  'GET /metrics': {
    tag: 'health and metrics',
    summary: 'A JSON summary of what /metrics/prometheus exposes',
    responses: { 200: 'Metrics summary' },
  },
  'GET /api/v1/openapi.json': {
    tag: 'health and metrics',
    summary: 'This document',
    responses: { 200: 'The OpenAPI 3.1 document' },
  },

  // ---- auth session (the dashboard's cookie)
  'GET /api/auth/session': {
    tag: 'auth session',
    summary: 'Who the dashboard is signed in as',
    responses: { 200: '{authEnabled, signedIn, subject, role, expiresAt}' },
  },
  'POST /api/auth/session': {
    tag: 'auth session',
    summary: 'Sign in with a JWT: sets an HttpOnly, SameSite=Strict session cookie',
    body: signInBody,
    example: { token: 'header.payload.signature' },
    responses: {
      200: 'The session, with Set-Cookie',
      400: 'Not a JWT, or authentication is off',
      401: 'The token does not verify',
      403: 'The token has no role',
    },
  },
  'DELETE /api/auth/session': {
    tag: 'auth session',
    summary: 'Sign out: clears the session cookie',
    responses: { 200: '{"signedIn":false}' },
  },

  // ---- consume / pop
  'GET /api/v1/pop': {
    tag: 'consume',
    summary: 'Pop across every queue of a namespace and/or task (discovery)',
    query: popQuery,
    params: POP_PARAMS,
    responses: {
      ...POP_RESPONSES,
      400: 'Neither namespace nor task: {"success":false,"error":"namespace or task is required","messages":[]}; or a query parameter that fails to parse',
    },
  },
  'GET /api/v1/pop/queue/[queue]': {
    tag: 'consume',
    summary: 'Pop from one queue; the broker picks the partitions',
    query: popQuery,
    params: POP_PARAMS,
    responses: POP_RESPONSES,
  },
  'GET /api/v1/pop/queue/[queue]/partition/[partition]': {
    tag: 'consume',
    summary: 'Pop from exactly one partition',
    query: popQuery,
    params: POP_PARAMS,
    responses: POP_RESPONSES,
  },

  // ---- produce
  'POST /api/v1/push': {
    tag: 'produce',
    summary: 'Push messages',
    body: pushBody,
    example: { items: [{ queue: 'openapi.q', partition: 'p', payload: { n: 1 }, transactionId: 't1' }] },
    responses: {
      201: 'One result per item, in input order: [{index, transaction_id, status: queued|duplicate, message_id, partition_id, trace_id, queueName}]',
      409: 'A queue with maxSize would overflow: nothing is pushed',
    },
  },

  // ---- ack and leases
  'POST /api/v1/ack': {
    tag: 'ack and leases',
    summary: 'Acknowledge one message',
    body: ackItem,
    example: { transactionId: 't1', partitionId: '00000000-0000-0000-0000-000000000000', status: 'completed' },
    responses: { 200: '[{index, transactionId, success, error, queueName, partitionName, leaseReleased, dlq}]' },
  },
  'POST /api/v1/ack/batch': {
    tag: 'ack and leases',
    summary: 'Acknowledge many messages',
    body: batchBody,
    example: { acknowledgments: [], consumerGroup: null },
    responses: { 200: 'One result per acknowledgment, in request order' },
  },
  'POST /api/v1/lease/[leaseId]/extend': {
    tag: 'ack and leases',
    summary: 'Extend a lease',
    body: extendBody,
    optionalBody: true,
    example: { seconds: 60 },
    responses: { 200: '[{index, leaseId, success, error, expiresAt}]' },
  },
  'GET /api/v1/leases': {
    tag: 'ack and leases',
    summary: 'Every lease, with its span, holder, expiry and deliveries',
    query: leaseQuery,
    params: [
      {
        name: 'lease',
        description: 'Only the rows of this lease id (a multi-partition pop holds one id over several partitions).',
      },
      { name: 'holder', description: 'Holders containing this text, in any case.' },
      { name: 'holderIs', description: 'Exactly this holder (what links use).' },
      { name: 'minDeliveries', description: 'Threshold of the redelivered and stuck states. Default 3.' },
      { name: 'sort', description: 'Default expiry.' },
    ],
    responses: {
      200: '{now, total, leases:[{leaseId, queue, partition, partitionId, consumerGroup, state, span, acked, holder, subject, acquiredAt, expiresAt, extensions, firstOffsetDeliveries, leaseSeconds, heldSeconds, expiresInSeconds}]}',
    },
  },
  'POST /api/v1/leases/[leaseId]/release': {
    tag: 'ack and leases',
    summary: 'Release a whole lease, every partition it holds (fenced, audited)',
    body: releaseBody,
    optionalBody: true,
    example: { reason: 'stuck worker' },
    responses: {
      200: '{released: true, leaseId, partitions:[{partitionId, consumerGroup, queue, partition, span:{from, to}, holder, expired}]}',
      404: 'No such live lease',
    },
  },

  // ---- transactions
  'POST /api/v1/transaction': {
    tag: 'transactions',
    summary: 'Push and ack atomically',
    body: transactionBody,
    example: { operations: [{ type: 'push', items: [{ queue: 'openapi.q', payload: {}, transactionId: 'tx1' }] }] },
    responses: {
      200: '{transactionId, success, results[]}; success:false (everything rolled back) with error',
      409: 'A queue with maxSize would overflow',
    },
  },

  // ---- the Streams API (spec/streams.md)
  'POST /streams/v1/queries': {
    tag: 'streams',
    summary:
      'Register a streaming query (idempotent per name and config_hash; reset:true drops its state when the hash changed)',
    body: registerBody,
    example: {
      name: 'openapi-query',
      source_queue: 'openapi.src',
      sink_queue: 'openapi.sink',
      config_hash: 'a'.repeat(64),
    },
    responses: {
      200: '{success:true, query_id, name, config_hash, fresh, reset}',
      409: '{success:false, query_id, name, error:"config_hash mismatch for query ..."}: another hash without reset; nothing changed',
    },
  },
  'POST /streams/v1/cycle': {
    tag: 'streams',
    summary: 'Commit one cycle in one transaction: state ops, sink pushes, the source ack fenced by the live lease',
    body: cycleBody,
    example: {
      query_id: '00000000-0000-0000-0000-000000000000',
      partition_id: '00000000-0000-0000-0000-000000000000',
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
    },
    responses: {
      200: '{success:true, query_id, partition_id, queueName, state_ops_applied, push_results[], ack_result:{success, count, lease_released, dlq}|null}; or success:false with error (Query not found, Message not found, Invalid or expired lease, Message already acknowledged, Message not in lease, a sink push refusal) and nothing applied',
    },
  },
  'POST /streams/v1/state/get': {
    tag: 'streams',
    summary:
      "Read a shard's committed state: by keys, a literal prefix, ripeness (windowEnd ≤ bound); rows in byte order of key",
    body: stateGetBody,
    example: {
      query_id: '00000000-0000-0000-0000-000000000000',
      partition_id: '00000000-0000-0000-0000-000000000000',
      key_prefix: 'win',
    },
    responses: { 200: '{success:true, rows:[{key, value, updated_at}]}' },
  },
  'POST /api/v1/streams/queries/[queryId]/reset': {
    tag: 'streams',
    summary: "Drop every state row of a streaming query (the dashboard's reset; audited as streams.reset)",
    body: resetBody,
    example: { reason: 'windows double counted' },
    responses: {
      200: '{reset:true, queryId, query, queue, sinkQueue, configHash, rowsDeleted, shards}',
      404: 'No such streaming query',
    },
  },
  'GET /api/dashboard/streams': {
    tag: 'dashboard reads',
    summary: 'Streaming queries with their queues, lag, state per partition and last cycle',
    query: streamsQuery,
    params: [
      { name: 'page', description: 'Page, 1-based.' },
      { name: 'pageSize', description: 'Queries a page, 1–500. Default 50.' },
    ],
    responses: {
      200: '{now, total, queries:[{queryId, name, sourceQueue, sinkQueue, configHash, consumerGroup, lag, cycles, refused, stateKeys, stateBytes, lastCycleAt, shardCount, statePartitions, shards[] (the 100 with most state)}]}',
    },
  },

  // ---- configure and queues
  'POST /api/v1/configure': {
    tag: 'configure and queues',
    summary: 'Create or fully re-set a queue',
    body: configureBody,
    example: { queue: 'openapi.q', namespace: 'ns', task: 't', options: { leaseTime: 300 } },
    responses: { 200: '{configured, queueId, partitionId, queue, namespace, task, options}' },
  },
  'GET /api/v1/resources/queues': {
    tag: 'configure and queues',
    summary: 'Every queue with its counts',
    responses: {
      200: '{queues:[{id, name, namespace, task, createdAt, partitions, messages:{total, pending, processing}}]}',
    },
  },
  'GET /api/v1/resources/queues/[queue]': {
    tag: 'configure and queues',
    summary: 'One queue with its options and partitions',
    responses: {
      200: '{id, name, namespace, task, configured, createdAt, options, partitions:[{id, name, createdAt, headOffset, lastPushAt}]}',
      404: 'No such queue',
    },
  },
  'DELETE /api/v1/resources/queues/[queue]': {
    tag: 'configure and queues',
    summary: 'Delete a queue and everything in it',
    responses: { 200: '{"deleted":true,"queue":"q","existed":true|false}' },
  },

  // ---- resources
  'GET /api/v1/resources/overview': {
    tag: 'resources',
    summary: 'Counts, lag statistics and throughput of the whole broker',
    responses: { 200: '{queues, partitions, namespaces, tasks, messages, lag, throughput, timestamp}' },
  },
  'GET /api/v1/resources/namespaces': {
    tag: 'resources',
    summary: 'Per namespace: queues, partitions, messages',
    responses: { 200: '{namespaces:[...]}' },
  },
  'GET /api/v1/resources/tasks': {
    tag: 'resources',
    summary: 'Per task: queues, partitions, messages',
    responses: { 200: '{tasks:[...]}' },
  },

  // ---- consumer groups
  'GET /api/v1/consumer-groups': {
    tag: 'consumer groups',
    summary: 'One entry per (group, queue)',
    responses: { 200: '[{name, queueName, partitions, totalLag, oldestUnconsumedAgeSeconds, subscription}]' },
  },
  'GET /api/v1/consumer-groups/lagging': {
    tag: 'consumer groups',
    summary: 'Partitions whose oldest unconsumed message is older than minLagSeconds (snake_case)',
    query: lagQuery,
    params: [
      { name: 'minLagSeconds', description: 'Default 3600.' },
      { name: 'limit', description: 'Default 1000.' },
    ],
    responses: {
      200: '[{consumer_group, queue_name, partition_name, partition_id, offset_lag, time_lag_seconds, oldest_unconsumed_at, last_consumed_at}]',
    },
  },
  'GET /api/v1/consumer-groups/[group]': {
    tag: 'consumer groups',
    summary: "One group's queues and partitions",
    responses: {
      200: '{consumerGroup, queues:[{queueName, totalLag, partitions:[{partitionId, partition, committedOffset, headOffset, lag, lease, paused}]}]}',
      404: 'No such group',
    },
  },
  'POST /api/v1/consumer-groups/[group]/subscription': {
    tag: 'consumer groups',
    summary: 'Create or move a durable subscription',
    body: subscriptionBody,
    example: { queue: 'openapi.q', subscriptionMode: 'new', subscriptionFrom: 'now' },
    responses: {
      200: '{success, consumerGroup, queueName, mode, startAt}; with subscriptionTimestamp: {success, consumerGroup, subscriptionsUpdated}',
    },
  },
  'DELETE /api/v1/consumer-groups/[group]': {
    tag: 'consumer groups',
    summary: "Drop a group's cursors (and subscriptions)",
    params: [
      {
        name: 'deleteMetadata',
        schema: { type: 'string', enum: ['true', 'false'] },
        description: 'Also drop subscription records. Default true.',
      },
      DELETE_REASON,
    ],
    responses: { 200: '{success, consumerGroup, deletedPartitions, metadataDeleted}' },
  },
  'DELETE /api/v1/consumer-groups/[group]/queues/[queue]': {
    tag: 'consumer groups',
    summary: "Drop a group's cursors on one queue",
    params: [
      {
        name: 'deleteMetadata',
        schema: { type: 'string', enum: ['true', 'false'] },
        description: 'Also drop subscription records. Default true.',
      },
      DELETE_REASON,
    ],
    responses: { 200: '{success, consumerGroup, deletedPartitions, metadataDeleted}' },
  },

  // ---- operator actions
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek': {
    tag: 'operator actions',
    summary: "Move a group's cursors on a queue (ends live leases, audited)",
    body: seekBody,
    example: SEEK_EXAMPLE,
    responses: { 200: '{success, consumerGroup, queueName, partitionsUpdated}', 404: 'No such queue' },
  },
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek': {
    tag: 'operator actions',
    summary: "Move a group's cursor on one partition",
    body: seekBody,
    example: SEEK_EXAMPLE,
    responses: {
      200: '{success, consumerGroup, queueName, partitionName, cursorMovedTo}',
      404: '{"success":false,"error":"Partition not found"}',
    },
  },
  'GET /api/v1/system/maintenance/pop': {
    tag: 'operator actions',
    summary: 'Whether pop maintenance is on',
    responses: { 200: '{"popMaintenanceMode":false}' },
  },
  'POST /api/v1/system/maintenance/pop': {
    tag: 'operator actions',
    summary: 'Turn pop maintenance on or off (audited)',
    body: maintenanceBody,
    example: { enabled: false, reason: 'done' },
    responses: { 200: '{"popMaintenanceMode":true|false}' },
  },
  'POST /api/v1/cursors/[partitionId]/[group]/pause': {
    tag: 'operator actions',
    summary: 'Pause or resume one (partition, group)',
    body: pauseBody,
    example: { paused: false },
    responses: { 200: '{partitionId, consumerGroup, paused, reason, until}', 404: 'No such partition' },
  },
  'POST /api/v1/cursors/[partitionId]/[group]/set-aside': {
    tag: 'operator actions',
    summary:
      "A way out for a poison message: move it to the group's dead letters or skip it (ends the lease on it, fenced; audited)",
    body: setAsideBody,
    example: { action: 'skip', reason: 'crashes the consumer' },
    responses: {
      200: '{queue, partition, partitionId, group, offset, transactionId, committed, failures, deliveries, holder, leaseEnded?, leaseId?, leaseExpired?}',
      404: 'No such partition, message, or cursor of the group',
      409: '{error, currentLeaseId}: the group is done with it, has nothing pending, or another lease holds it than the one given',
    },
  },
  'POST /api/v1/leases/release': {
    tag: 'operator actions',
    summary: 'Force release several leases with one reason (one audit entry per lease)',
    body: bulkReleaseBody,
    example: { leaseIds: ['00000000-0000-7000-8000-000000000000'], reason: 'worker-7 died' },
    responses: { 200: '{released, results:[{leaseId, released, error, partitions[]}]}' },
  },
  'GET /api/v1/events': {
    tag: 'operator actions',
    summary: 'Server-sent events: pushes, claims, acks, releases, expiries, pauses, maintenance',
    produces: 'text/event-stream',
    params: [
      { name: 'queue', schema: str, description: 'Only events of this queue.' },
      { name: 'group', schema: str, description: 'Only events of this group.' },
    ],
    responses: { 200: 'An event stream of `data: {json}` lines' },
  },
  'GET /api/v1/audit': {
    tag: 'operator actions',
    summary: 'The audit log, newest first (by time, then id)',
    query: auditQuery,
    params: [
      { name: 'limit', description: 'Default 100.' },
      {
        name: 'before',
        description: 'An entry id (the `next` of the page before): the entries older than it (the next page).',
      },
    ],
    responses: {
      200: '{entries:[{id, at, actor, action, targetType, target, reason, result, details}], next: the id to pass as `before` for the next page, or null}',
    },
  },
  'GET /api/v1/stats': {
    tag: 'rates and consumers',
    summary: 'Pushed, delivered, acked and failed per second, and lag, from the sampled counters',
    query: trendsQuery,
    params: [
      {
        name: 'queue',
        description:
          'Without it: every queue as a whole. With it: that queue as a whole (group null); add group for one group.',
      },
      { name: 'group', description: 'With queue: that group alone.' },
      { name: 'minutes', description: 'The window, default 60; at most STATS_RETENTION_HOURS × 60.' },
      {
        name: 'points',
        description:
          'Cut the window into this many equal buckets, one point each (1 to 1000). Default: a point per sample.',
      },
    ],
    responses: {
      200: '{now, minutes, sampleSeconds, series:[{queue, group, at:[epoch seconds], pushed:[per s], delivered:[per s], acked:[per s], failed:[per s], lag:[messages]}]}',
      404: 'No such queue, or no such group on it',
    },
  },
  'GET /api/v1/consumers': {
    tag: 'rates and consumers',
    summary: 'Lease holders: what each holds now, and its acks, failures and expired leases of the last hour',
    query: consumersQuery,
    params: [{ name: 'pageSize', description: 'Default 100.' }],
    responses: {
      200: '{now, since, total, consumers:[{holder, leases, partitions, messages, expiredNow, lastSeenAt, acked, failed, expired}]}',
    },
  },

  // ---- dead letters
  'GET /api/v1/dlq': {
    tag: 'dead letters',
    summary: 'Dead letters, newest failure first',
    query: deadLetterQuery,
    params: [
      { name: 'limit', description: 'Default 100.' },
      { name: 'offset', description: 'Default 0.' },
      { name: 'error', description: 'A part of the last error, any case.' },
      { name: 'since', description: 'Failed at or after (ISO 8601 with a zone).' },
      { name: 'until', description: 'Failed before (ISO 8601 with a zone).' },
    ],
    responses: { 200: '{messages:[{..., offset}], pagination:{limit, offset, total}}' },
  },
  'POST /api/v1/dlq/requeue': {
    tag: 'dead letters',
    summary:
      'Requeue dead letters as new messages of their partitions (every group consuming the partition receives them; audited)',
    body: deadLetterActionBody,
    example: {
      items: [{ partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: 'g', offset: 1 }],
      reason: 'fixed the consumer',
    },
    responses: {
      200: '{requeued, results:[{index, partitionId, consumerGroup, offset, success, error, queue, partition, transactionId, lastError, retryCount, newTransactionId, newMessageId, newOffset}]}; with dryRun: {dryRun, deadLetters, messages, notFound, queues:[{queue, deadLetters, messages, otherGroups}]}',
      409: 'A queue with maxSize would overflow: nothing is requeued',
    },
  },
  'POST /api/v1/dlq/discard': {
    tag: 'dead letters',
    summary: 'Discard dead letters (their messages stay done for their groups; audited)',
    body: deadLetterActionBody,
    example: {
      items: [{ partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: 'g', offset: 1 }],
      reason: 'poison message, not needed',
    },
    responses: {
      200: '{discarded, results:[{index, partitionId, consumerGroup, offset, success, error, queue, partition, transactionId, lastError, retryCount}]}; with dryRun: {dryRun, deadLetters, messages, notFound, queues[]}',
    },
  },

  // ---- traces
  'POST /api/v1/traces': {
    tag: 'traces',
    summary: 'Record a trace event on a message (what msg.trace() sends)',
    body: traceBody,
    example: { transactionId: 't1', partitionId: '00000000-0000-0000-0000-000000000000', data: { step: 1 } },
    responses: { 200: '{"success":true,"traceId":"..."}', 404: '{"success":false,"error":"Message not found"}' },
  },
  'GET /api/v1/traces/[partitionId]/[transactionId]': {
    tag: 'traces',
    summary: "A message's trace events, oldest first",
    responses: { 200: '{traces[], count}', 404: 'No such message' },
  },
  'GET /api/v1/traces/by-name/[name]': {
    tag: 'traces',
    summary: 'Trace events of one trace name',
    query: namePage,
    params: [
      { name: 'limit', description: 'Default 100.' },
      { name: 'offset', description: 'Default 0.' },
    ],
    responses: { 200: '{traces[], count, total, limit, offset}' },
  },
  'GET /api/v1/traces/names': {
    tag: 'traces',
    summary: 'Trace names in use',
    query: namePage,
    params: [
      { name: 'limit', description: 'Default 50.' },
      { name: 'offset', description: 'Default 0.' },
    ],
    responses: { 200: '{traceNames:[{traceName, traceCount, messageCount, lastSeen}], count, total, limit, offset}' },
  },

  // ---- messages
  'GET /api/v1/messages': {
    tag: 'messages',
    summary: 'Messages pushed in a time window (default: the last hour), newest first, with their status',
    query: messageQuery,
    params: [
      { name: 'limit', description: 'Default 200.' },
      { name: 'offset', description: 'Default 0.' },
    ],
    responses: { 200: '{messages[]}' },
  },
  'GET /api/v1/messages/[partitionId]/[transactionId]': {
    tag: 'messages',
    summary: 'One message with its per-group state, deliveries and failures',
    responses: {
      200: '{id, transactionId, partitionId, partition, queue, offset, createdAt, traceId, producerSub, data, consumerGroups[]}',
      404: 'No such message',
    },
  },
  'DELETE /api/v1/messages/[partitionId]/[transactionId]': {
    tag: 'messages',
    summary: 'Delete one message (audited)',
    params: [DELETE_REASON],
    responses: { 200: '{success, partitionId, transactionId}', 404: 'No such message' },
  },

  // ---- dashboard reads
  'GET /api/dashboard/overview': {
    tag: 'dashboard reads',
    summary: "The dashboard's overview",
    responses: { 200: 'Overview figures' },
  },
  'GET /api/dashboard/queues/[queue]': {
    tag: 'dashboard reads',
    summary: "The dashboard's queue page: partitions × groups, paged",
    query: queuePageQuery,
    params: [
      { name: 'partition', description: 'Partitions containing this text, in any case.' },
      { name: 'partitionIs', description: 'Exactly this partition (what links use).' },
    ],
    responses: { 200: 'The queue page', 404: 'No such queue' },
  },
  'GET /api/dashboard/maintenance': {
    tag: 'dashboard reads',
    summary: 'Maintenance jobs and their last runs',
    responses: { 200: 'Maintenance state' },
  },
  'GET /api/dashboard/activity': {
    tag: 'dashboard reads',
    summary:
      "What happened on some partitions since a time, counted by the database: the Live page's per-partition table",
    query: activityQuery,
    params: [
      { name: 'since', description: 'ISO time (with a zone).' },
      { name: 'partitions', description: 'JSON [[queue, partition], ...], at most 200.' },
      { name: 'group', description: "Only this group's deliveries." },
    ],
    responses: {
      200: '{now, since, partitions:[{partitionId, queue, partition, pushed, claimed, acked, failed, expired}]}',
    },
  },
  'GET /api/dashboard/recent-claims': {
    tag: 'dashboard reads',
    summary: "The last 50 claims of the last 10 minutes, newest first: the Live page's history when it opens",
    query: recentQuery,
    params: [
      { name: 'queue', description: 'One queue (exact).' },
      { name: 'group', description: 'One group (exact).' },
    ],
    responses: {
      200: '{now, events:[{type:"claim", earlier:true, at, group, holder, leaseId, autoAck, ended, partitions:[{queue, partition, partitionId, count}]}]}',
    },
  },
  'GET /api/dashboard/groups': {
    tag: 'dashboard reads',
    summary:
      'Every consumer group with its queues: lag in messages and time, lag trend, members, leases, pauses, subscription',
    query: groupsQuery,
    params: [
      { name: 'group', description: 'One group (exact).' },
      { name: 'minutes', description: 'The trend window, default 60; at most STATS_RETENTION_HOURS × 60.' },
    ],
    responses: {
      200: '{now, minutes, memberMinutes, groups:[{group, lag, lagSeconds, members:[{holder, seenAt}], liveLeases, expiredLeases, paused, growing, queues:[{queue, partitions, lag, lagSeconds, liveLeases, expiredLeases, paused, subscription, trend:[[epoch s, lag]], growing:{from, to}|null}]}]}',
    },
  },
  'GET /api/dashboard/process': {
    tag: 'dashboard reads',
    summary:
      'This server process: version, uptime, memory, pool, parked long polls per scope, their wake-ups and claims per wake-up',
    responses: { 200: 'Process facts' },
  },
  'GET /api/dashboard/pop-preview': {
    tag: 'dashboard reads',
    summary: 'Dry run of a pop: what it would claim now, claiming nothing',
    query: popQuery,
    params: [
      {
        name: 'queue',
        schema: str,
        description: 'The queue; without it, a discovery pop (namespace or task required).',
      },
      { name: 'partition', schema: str, description: 'One partition of the queue.' },
      ...POP_PARAMS,
    ],
    responses: {
      200: '{status: 200|204, empty: null|reason, body, why: null|{text, leases?:[{partition, holder, expiresAt, leaseId}]} (on a 204: a queue or partition that does not exist, or leases of other holders)}',
      400: 'Neither queue, namespace nor task; or a query parameter that fails to parse',
    },
  },
  'GET /api/dashboard/pop-target': {
    tag: 'dashboard reads',
    summary: 'Whether a pop would create the queue or the group (the console asks first)',
    query: popTargetQuery,
    responses: { 200: '{queue, queueExists, consumerGroup, groupExists}' },
  },
  'GET /api/dashboard/queues/[queue]/partitions/[partition]': {
    tag: 'dashboard reads',
    summary: "A window of at most 100 offsets of one partition, with each message's state per group",
    query: browseQuery,
    params: [
      {
        name: 'from',
        description: "First offset; default: centred on the group's cursor, or on the lowest committed cursor.",
      },
      { name: 'limit', description: 'Window size, 1–100. Default 50.' },
      { name: 'group', schema: str, description: "Centre on this group's cursor." },
    ],
    responses: {
      200: '{queue, partition, partitionId, head, group, from, to, limit, prevFrom, nextFrom, groups:[{name, committed}], messages:[{offset, id, transactionId, createdAt, preview, states:[{group, state}]}]}',
      404: 'No such partition, or the group has no cursor on it',
    },
  },
  'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview': {
    tag: 'operator actions',
    summary: 'What a seek would do, moving nothing: messages skipped and replayed per partition and in total',
    query: seekPreviewQuery,
    params: [
      { name: 'toEnd', description: '`true`: preview a seek to the end.' },
      { name: 'timestamp', description: 'Preview a seek to this time (give exactly one of toEnd and timestamp).' },
      { name: 'partition', schema: str, description: 'Only this partition (the per-partition seek).' },
      {
        name: 'after',
        schema: str,
        description: "A partition name: the page of 1,000 partitions after it (the answer's next); not with partition.",
      },
      { name: 'limit', description: 'Partitions of the page listed in changes, 1–1000. Default 100.' },
    ],
    responses: {
      200: '{consumerGroup, queueName, partitionName, target, partitions, partitionsMoved, skipped, replayed, leasesEnded, changes:[{partition, partitionId, committed, target, skipped, replayed, endsLease}], changesTruncated, next}',
      404: 'No such queue or partition',
    },
  },
  'GET /api/v1/search': {
    tag: 'dashboard reads',
    summary: 'Find a lease, message, transaction or queue by a pasted id or name',
    query: searchQuery,
    params: [
      { name: 'q', schema: str, description: 'A lease id, message id, transaction id, or the start of a queue name.' },
      { name: 'kind', description: '`queue`: queue names only (q may be empty).' },
      { name: 'limit', description: 'At most this many matches, 1–50. Default 20.' },
    ],
    responses: { 200: "{q, matches:[{kind: 'lease'|'message'|'transaction'|'queue', label, href}], truncated}" },
  },
};

/** `/api/v1/pop/queue/[queue]` → `/api/v1/pop/queue/{queue}` (and `[...rest]` → `{rest}`). */
export const openApiPath = (pattern: string) => pattern.replace(/\[(?:\.\.\.)?(\w+)\]/g, '{$1}');

const toSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
};

/**
 * A success answer's schema: what the code answers (output side of its zod schema), open to fields
 * a later release adds, so that a client generated from this document keeps working against it
 * (tests/response-schemas.test.ts checks the answers with every object closed).
 */
const toResponseSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return openObjects(rest) as JsonSchema;
};

function openObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openObjects);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'additionalProperties' && v === false))
      .map(([k, v]) => [k, openObjects(v)]),
  );
}

const jsonContent = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ERROR = { $ref: '#/components/schemas/Error' };

/** What every route of its kind may answer: the envelope of route() and readJson(). */
function commonResponses(method: string, level: Level, body: boolean): Record<number, string> {
  const common: Record<number, string> = {
    500: 'No database connection in time ({"error":"pool"}) or a cancelled statement',
  };
  if (level !== 'public') {
    Object.assign(common, {
      401: 'No token, or one that does not verify (auth on)',
      403: `The token lacks the ${level} role, or a cross-site request`,
      503: 'The signing keys (JWT_JWKS_URL) could not be fetched',
    });
  } else if (method !== 'GET') common[403] = 'A cross-site request';
  if (body)
    Object.assign(common, {
      400: 'Malformed JSON or a field that fails validation: {"error":"<field>: <why>"}',
      413: 'Body above MAX_BODY_BYTES',
      415: 'Content-Type is not application/json',
    });
  else common[400] = 'A path or query value that fails validation';
  return common;
}

function parametersOf(pattern: string, op: Operation): unknown[] {
  const path = [...pattern.matchAll(/\[(?:\.\.\.)?(\w+)\]/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: str,
  }));
  const fromZod = op.query ? toSchema(op.query) : { properties: {}, required: [] };
  const properties = (fromZod.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((fromZod.required ?? []) as string[]);
  const hand = new Map((op.params ?? []).map((p) => [p.name, p]));
  const names = [...new Set([...Object.keys(properties), ...hand.keys()])];
  const query = names.map((name) => {
    const p = hand.get(name);
    return {
      name,
      in: 'query',
      required: required.has(name) || (p?.required ?? false),
      schema: properties[name] ?? p?.schema ?? int,
      ...(p?.description ? { description: p.description } : {}),
    };
  });
  return [...path, ...query];
}

function operationOf(key: string, op: Operation, level: Level) {
  const [method] = key.split(' ');
  const statuses = { ...commonResponses(method, level, op.body !== undefined), ...op.responses };
  const responses = Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => {
      const code = Number(status);
      const success = (RESPONSES as Record<string, Record<number, z.ZodType>>)[key]?.[code];
      // a success without a schema in lib/http/responses.ts gets the empty one: tests/response-schemas.test.ts names it
      const content =
        code === 204
          ? undefined
          : code < 300
            ? { [op.produces ?? 'application/json']: { schema: success ? toResponseSchema(success) : {} } }
            : jsonContent(ERROR);
      return [status, content ? { description, content } : { description }];
    }),
  );
  return {
    operationId: key.replace(/[^\w]+/g, '_').replace(/_+$/, ''),
    summary: op.summary,
    tags: [op.tag],
    ...(op.description ? { description: op.description } : {}),
    'x-required-role': level,
    parameters: parametersOf(key.split(' ')[1], op),
    ...(op.body
      ? {
          requestBody: {
            required: !op.optionalBody,
            content: {
              'application/json': {
                schema: toSchema(op.body),
                ...(op.example !== undefined ? { example: op.example } : {}),
              },
            },
          },
        }
      : {}),
    responses,
    security: level === 'public' ? [] : [{ bearer: [] }],
  };
}

let cached: object | undefined;

/** The document; built once per process (the schemas do not change while it runs). */
export function openApiDocument(): object {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, op] of Object.entries(OPERATIONS)) {
    const [method, pattern] = key.split(' ');
    const level = ACCESS[key] ?? 'admin';
    (paths[openApiPath(pattern)] ??= {})[method.toLowerCase()] = operationOf(key, op, level);
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'queen-pg',
      version: pkg.version,
      description:
        'A lease-based partitioned message-queue broker on PostgreSQL, wire-compatible with the Queen MQ HTTP API. Prose reference: docs/api.md. `x-required-role` is the role a route needs when JWT_ENABLED=true.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/' }],
    tags: [...new Set(Object.values(OPERATIONS).map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'role claim: read-only < read-write < admin',
        },
      },
    },
  };
  return cached;
}
