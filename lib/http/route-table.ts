// The route table: every route of the app declared once, keyed by method and folder pattern.
// An entry says who may call it (`access`, DESIGN.md §4 and http-api.md's levels), how it is
// documented (tag, summary, the zod objects its query and body are parsed with, extra parameters,
// an example body, what each status means) and what its answers hold (`schemas`: status → zod
// schema, checked against the real answers by tests/response-schemas.test.ts and against the code's
// result types at compile time by lib/http/responses.ts). The access rules route() applies, the
// OpenAPI document (lib/http/openapi.ts) and the response checks all come from here;
// tests/access.test.ts fails when a route file and this table disagree.
import type { Level } from './access';
import { ackItem, batchBody } from '@/lib/broker/ack';
import { activityQuery, recentQuery } from '@/lib/dashboard/activity';
import { browseQuery } from '@/lib/dashboard/browse';
import { bulkReleaseBody, extendBody, listFilters as leaseQuery, releaseBody } from '@/lib/broker/leases';
import { configureBody } from '@/lib/broker/configure';
import { consumersQuery } from '@/lib/dashboard/consumers';
import { cycleBody, registerBody, stateGetBody } from '@/lib/broker/streams/contracts';
import { deadLetterActionBody } from '@/lib/broker/dead-letter-actions';
import { deadLetterErrorsQuery } from '@/lib/dashboard/dead-letter-errors';
import { filters as auditQuery } from '@/lib/broker/audit';
import { filters as deadLetterQuery } from '@/lib/broker/dead-letters';
import { filters as messageQuery } from '@/lib/broker/list-messages';
import { groupsQuery } from '@/lib/dashboard/groups';
import { lagQuery } from '@/lib/broker/lagging';
import { maintenanceBody } from '@/lib/broker/pop-maintenance';
import { namePage, traceBody } from '@/lib/broker/traces';
import { params as queuePageQuery } from '@/lib/dashboard/queue';
import { pauseBody } from '@/lib/broker/pause';
import { popQuery } from '@/lib/broker/pop-params';
import { popTargetQuery } from '@/lib/dashboard/pop-target';
import { pushBody } from '@/lib/broker/push';
import { EMPTY_REASONS, type EmptyReason, IDLE_BECAUSE } from '@/lib/broker/empty-reasons';
import { queueOptions } from '@/lib/broker/options';
import { resetBody } from '@/lib/broker/streams/reset';
import { searchQuery } from '@/lib/dashboard/find-by-id';
import { seekBody, subscriptionBody } from '@/lib/broker/consumer-groups';
import { seekPreviewQuery } from '@/lib/broker/seek-preview';
import { setAsideBody } from '@/lib/broker/set-aside';
import { signInBody } from './session';
import {
  str,
  int,
  POP_PARAMS,
  POP_RESPONSES,
  DELETE_REASON,
  SEEK_EXAMPLE,
  iso,
  uuid,
  popResponse,
  dryRunPop,
  pushResult,
  ackResult,
  trendSeries,
  session,
  deadLetterPreview,
  deadLetterResult,
  figuresOfGroup,
  readSource,
  type RouteDoc,
} from './contracts';
import { streamsQuery } from '@/lib/dashboard/streams';
import { transactionBody } from '@/lib/broker/transaction';
import { trendsQuery } from '@/lib/dashboard/trends';
import { z } from 'zod';

export interface RouteSpec extends RouteDoc {
  /** Who may call it (with auth on): public, read-only, read-write or admin. */
  access: Level;
  /** Status → the answer's schema (success answers; errors are the one envelope). */
  schemas: Record<number, z.ZodType>;
}

export const ROUTES = {
  // ---- system, health and metrics
  'GET /health': {
    access: 'public',
    tag: 'health and metrics',
    summary: 'Liveness and database reachability',
    responses: {
      200: '{"status":"healthy","database":"connected"}',
      503: '{"status":"unhealthy","database":"disconnected"}',
    },
    schemas: {
      200: z.object({
        status: z.string(),
        database: z.string(),
      }),
    },
  },
  'GET /ready': {
    access: 'public',
    tag: 'health and metrics',
    summary: 'Readiness: boot done, every migration and function file of this release applied, the database answering',
    responses: {
      200: '{"status":"ready","migrations":"applied","database":"connected"}',
      503: '{"status":"not ready","reason":"booting"|"shutting down"|"database unreachable"|"not applied: ..."}',
    },
    schemas: {
      200: z.object({
        status: z.string(),
        migrations: z.string(),
        database: z.string(),
      }),
    },
  },
  'GET /metrics/prometheus': {
    access: 'public',
    tag: 'health and metrics',
    summary: 'Prometheus metrics',
    produces: 'text/plain',
    responses: { 200: 'Prometheus text exposition format' },
    schemas: { 200: z.string().describe('Prometheus text exposition format') },
  },
  'GET /metrics': {
    access: 'public',
    tag: 'health and metrics',
    summary: 'A JSON summary of what /metrics/prometheus exposes',
    responses: { 200: 'Metrics summary' },
    schemas: {
      200: z.object({
        figuresUp: z.boolean(),
        queues: z.array(z.object({ queue: z.string(), pushed: z.number(), consumerGroups: z.array(figuresOfGroup) })),
        requests: z.array(
          z.object({
            route: z.string(),
            method: z.string(),
            status: z.int(),
            count: z.int(),
            seconds: z.number(),
          }),
        ),
        pool: z.object({
          total: z.int(),
          idle: z.int(),
          waiting: z.int(),
        }),
        parkedPops: z.int(),
        listener: z.object({
          connected: z.boolean(),
        }),
        replica: readSource,
      }),
    },
  },
  'GET /api/v1/openapi.json': {
    access: 'public',
    tag: 'health and metrics',
    summary: 'This document',
    responses: { 200: 'The OpenAPI 3.1 document' },
    schemas: {
      200: z.looseObject({
        openapi: z.string(),
        info: z.looseObject({ title: z.string(), version: z.string() }),
        paths: z.record(z.string(), z.record(z.string(), z.unknown())),
      }),
    },
  },

  // ---- auth session (the dashboard's cookie)
  'GET /api/auth/session': {
    access: 'public',
    tag: 'auth session',
    summary: 'Who the dashboard is signed in as',
    responses: { 200: 'The session: whether auth is on, and who is signed in with which role until when' },
    schemas: { 200: session },
  },
  'POST /api/auth/session': {
    access: 'public',
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
    schemas: { 200: session },
  },
  'DELETE /api/auth/session': {
    access: 'public',
    tag: 'auth session',
    summary: 'Sign out: clears the session cookie',
    responses: { 200: '{"signedIn":false}' },
    schemas: {
      200: z.object({
        signedIn: z.boolean(),
      }),
    },
  },

  // ---- consume / pop
  'GET /api/v1/pop': {
    access: 'read-write',
    tag: 'consume',
    summary: 'Pop across every queue of a namespace and/or task (discovery)',
    query: popQuery,
    params: POP_PARAMS,
    responses: {
      ...POP_RESPONSES,
      400: 'Neither namespace nor task: {"success":false,"error":"namespace or task is required","messages":[]}; or a query parameter that fails to parse',
    },
    schemas: { 200: popResponse },
  },
  'GET /api/v1/pop/queue/[queue]': {
    access: 'read-write',
    tag: 'consume',
    summary: 'Pop from one queue; the broker picks the partitions',
    query: popQuery,
    params: POP_PARAMS,
    responses: POP_RESPONSES,
    schemas: { 200: popResponse },
  },
  'GET /api/v1/pop/queue/[queue]/partition/[partition]': {
    access: 'read-write',
    tag: 'consume',
    summary: 'Pop from exactly one partition',
    query: popQuery,
    params: POP_PARAMS,
    responses: POP_RESPONSES,
    schemas: { 200: popResponse },
  },

  // ---- produce
  'POST /api/v1/push': {
    access: 'read-write',
    tag: 'produce',
    summary: 'Push messages',
    body: pushBody,
    example: { items: [{ queue: 'openapi.q', partition: 'p', payload: { n: 1 }, transactionId: 't1' }] },
    responses: {
      201: 'One result per item, in input order (`duplicate` for a repeat of partition and transactionId)',
      409: 'A queue with maxSize would overflow: nothing is pushed',
    },
    schemas: { 201: z.array(pushResult) },
  },

  // ---- ack and leases
  'POST /api/v1/ack': {
    access: 'read-write',
    tag: 'ack and leases',
    summary: 'Acknowledge one message',
    body: ackItem,
    example: { transactionId: 't1', partitionId: '00000000-0000-0000-0000-000000000000', status: 'completed' },
    responses: { 200: 'One result (an ack that fails is success:false with error, not an HTTP error)' },
    schemas: { 200: z.array(ackResult) },
  },
  'POST /api/v1/ack/batch': {
    access: 'read-write',
    tag: 'ack and leases',
    summary: 'Acknowledge many messages',
    body: batchBody,
    example: { acknowledgments: [], consumerGroup: null },
    responses: { 200: 'One result per acknowledgment, in request order' },
    schemas: { 200: z.array(ackResult) },
  },
  'POST /api/v1/lease/[leaseId]/extend': {
    access: 'read-write',
    tag: 'ack and leases',
    summary: 'Extend a lease',
    body: extendBody,
    optionalBody: true,
    example: { seconds: 60 },
    responses: { 200: 'One result: the new expiry, or success:false with error' },
    schemas: {
      200: z.array(
        z.object({
          index: z.int(),
          leaseId: z.string(),
          success: z.boolean(),
          error: z.string().nullable(),
          expiresAt: z.string().nullable(),
        }),
      ),
    },
  },
  'GET /api/v1/leases': {
    access: 'read-only',
    tag: 'ack and leases',
    summary: 'Every lease, with its span, holder, expiry and deliveries',
    query: leaseQuery,
    params: [
      {
        name: 'lease',
        description:
          'Only the rows of this lease id: every (partition, group) row it holds (a `partitions=3` pop holds 3). Not a UUID: 400.',
      },
      {
        name: 'holder',
        description:
          'Holders containing this text, in any case (`%` and `_` are plain characters): `worker-1` also lists `worker-10` (the Leases page text box).',
      },
      {
        name: 'holderIs',
        description: "Exactly this holder (the Consumers page's links: their figures count these rows).",
      },
      {
        name: 'state',
        description:
          "Default every lease. `live`; `expiring` (under 10 s left); `expired` (not yet reclaimed); `held-long` (live, held over twice the duration its holder asked for); `redelivered` (first offset delivered more than `minDeliveries` times); `stuck` (past its current expiry and not reclaimed, or redelivered; not held-long: an extended lease is at work; the overview's stuck figure counts the same leases with the default threshold).",
      },
      { name: 'minDeliveries', description: 'Threshold of the redelivered and stuck states. Default 3.' },
      { name: 'sort', description: '`expiry` (default), `held` or `deliveries`.' },
      { name: 'page', description: 'Page, from 1 (with pageSize). Default: every row.' },
      { name: 'pageSize', description: 'Rows per page, 1 to 1000. Default: every row.' },
    ],
    responses: {
      200: 'The leases of the page, with how many match in all',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        total: z.int(),
        leases: z.array(
          z.object({
            leaseId: z.string(),
            queue: z.string(),
            partition: z.string(),
            partitionId: z.string(),
            consumerGroup: z.string(),
            state: z.enum(['live', 'expired']),
            span: z.object({
              from: z.int(),
              to: z.int(),
              size: z.int(),
            }),
            acked: z.int(),
            holder: z.string().nullable(),
            subject: z.string().nullable().describe('with auth on, the subject of the token that took the lease'),
            acquiredAt: z.string().nullable(),
            expiresAt: z.string().nullable(),
            extensions: z.int(),
            firstOffsetDeliveries: z.int(),
            leaseSeconds: z.number().nullable(),
            heldSeconds: z.number(),
            expiresInSeconds: z.number(),
          }),
        ),
      }),
    },
  },
  'POST /api/v1/leases/[leaseId]/release': {
    access: 'admin',
    tag: 'ack and leases',
    summary: 'Release a whole lease, every partition it holds (fenced, audited)',
    body: releaseBody,
    optionalBody: true,
    example: { reason: 'stuck worker' },
    responses: {
      200: 'The lease released: every partition it held, with the span now claimable again',
      404: 'No such live lease',
    },
    schemas: {
      200: z.object({
        released: z.boolean(),
        leaseId: z.string(),
        partitions: z.array(
          z.object({
            partitionId: z.string(),
            consumerGroup: z.string(),
            queue: z.string(),
            partition: z.string(),
            span: z.object({
              from: z.int(),
              to: z.int(),
            }),
            holder: z.string().nullable(),
            expired: z.boolean(),
          }),
        ),
      }),
    },
  },

  // ---- transactions
  'POST /api/v1/transaction': {
    access: 'read-write',
    tag: 'transactions',
    summary: 'Push and ack atomically',
    body: transactionBody,
    example: { operations: [{ type: 'push', items: [{ queue: 'openapi.q', payload: {}, transactionId: 'tx1' }] }] },
    responses: {
      200: 'One result per operation; success:false (everything rolled back) with error',
      409: 'A queue with maxSize would overflow',
    },
    schemas: {
      200: z.object({
        transactionId: z.string(),
        success: z.boolean(),
        error: z.string().optional().describe('why everything was rolled back (success false)'),
        results: z.array(
          z.union([
            z.object({
              index: z.int(),
              type: z.literal('push'),
              success: z.literal(true),
              transactionId: z.string(),
              messageId: uuid,
              partitionId: uuid,
              queueName: z.string(),
            }),
            z.object({
              index: z.int(),
              type: z.literal('ack'),
              success: z.boolean(),
              transactionId: z.string(),
              error: z.string().nullable(),
              dlq: z.boolean(),
            }),
          ]),
        ),
      }),
    },
  },

  // ---- the Streams API (spec/streams.md)
  'POST /streams/v1/queries': {
    access: 'read-write',
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
      200: 'The query registered (or found with the same hash): its id, and whether it is new or was reset',
      409: '{success:false, query_id, name, error:"config_hash mismatch for query ..."}: another hash without reset; nothing changed',
    },
    schemas: {
      200: z.object({
        success: z.boolean(),
        query_id: z.string(),
        name: z.string(),
        config_hash: z.string(),
        fresh: z.boolean(),
        reset: z.boolean(),
      }),
    },
  },
  'POST /streams/v1/cycle': {
    access: 'read-write',
    tag: 'streams',
    summary: 'Commit one cycle in one transaction: state ops, sink pushes, the source ack fenced by the live lease',
    body: cycleBody,
    example: {
      query_id: '00000000-0000-0000-0000-000000000000',
      partition_id: '00000000-0000-0000-0000-000000000000',
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
    },
    responses: {
      200: 'The cycle applied: its state operations, pushes and ack; or success:false with error (Query not found, Message not found, Invalid or expired lease, Message already acknowledged, Message not in lease, a sink push refusal) and nothing applied',
    },
    schemas: {
      200: z.object({
        success: z.boolean().describe('false: refused, nothing applied (error says why)'),
        query_id: z.string(),
        partition_id: z.string(),
        queueName: z.string().nullable(),
        error: z.string().optional(),
        state_ops_applied: z.int(),
        push_results: z.array(pushResult),
        ack_result: z
          .object({ dlq: z.boolean(), count: z.int(), success: z.boolean(), lease_released: z.boolean() })
          .nullable(),
      }),
    },
  },
  'POST /streams/v1/state/get': {
    access: 'read-only',
    tag: 'streams',
    summary:
      "Read a shard's committed state: by keys, a literal prefix, ripeness (windowEnd ≤ bound); rows in byte order of key",
    body: stateGetBody,
    example: {
      query_id: '00000000-0000-0000-0000-000000000000',
      partition_id: '00000000-0000-0000-0000-000000000000',
      key_prefix: 'win',
    },
    responses: { 200: 'The state rows, in byte order of key' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        rows: z.array(
          z.object({
            key: z.string(),
            value: z.unknown(),
            updated_at: z.string(),
          }),
        ),
      }),
    },
  },
  'POST /api/v1/streams/queries/[queryId]/reset': {
    access: 'admin',
    tag: 'streams',
    summary: "Drop every state row of a streaming query (the dashboard's reset; audited as streams.reset)",
    body: resetBody,
    example: { reason: 'windows double counted' },
    responses: {
      200: 'The query reset: how many state rows and shards were dropped',
      404: 'No such streaming query',
    },
    schemas: {
      200: z.object({
        reset: z.boolean(),
        query: z.string(),
        queue: z.string(),
        shards: z.int(),
        queryId: z.string(),
        sinkQueue: z.string().nullable(),
        configHash: z.string(),
        rowsDeleted: z.int(),
      }),
    },
  },
  'GET /api/dashboard/streams': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: 'Streaming queries with their queues, lag, state per partition and last cycle',
    query: streamsQuery,
    params: [
      { name: 'page', description: 'Page, 1-based. Default 1.' },
      { name: 'pageSize', description: 'Queries a page, 1–500. Default 50.' },
    ],
    responses: {
      200: 'The page of queries, each with its lag, cycles, state and the 100 shards with most state',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        total: z.int(),
        queries: z.array(
          z.object({
            queryId: z.string(),
            name: z.string(),
            sourceQueue: z.string(),
            sinkQueue: z.string().nullable(),
            configHash: z.string(),
            createdAt: z.string(),
            updatedAt: z.string(),
            consumerGroup: z.string(),
            lag: z.int().nullable(),
            cycles: z.int(),
            refused: z.int(),
            stateKeys: z.int(),
            stateBytes: z.int(),
            lastCycleAt: z.string().nullable(),
            shardCount: z.int(),
            statePartitions: z.int(),
            shards: z.array(
              z.object({
                partitionId: z.string(),
                partition: z.string().nullable(),
                stateKeys: z.int(),
                stateBytes: z.int(),
                cycles: z.int(),
                refused: z.int(),
                lastCycleAt: z.string().nullable(),
                lastRefusedAt: z.string().nullable(),
                lastRefusal: z.string().nullable(),
              }),
            ),
          }),
        ),
      }),
    },
  },

  // ---- configure and queues
  'POST /api/v1/configure': {
    access: 'read-write',
    tag: 'configure and queues',
    summary: 'Create or fully re-set a queue',
    body: configureBody,
    example: { queue: 'openapi.q', namespace: 'ns', task: 't', options: { leaseTime: 300 } },
    responses: { 200: 'The queue configured, with every option as stored and the id of its Default partition' },
    schemas: {
      200: z.object({
        configured: z.boolean(),
        queueId: z.string(),
        partitionId: z.string(),
        queue: z.string(),
        namespace: z.string(),
        task: z.string(),
        options: queueOptions,
      }),
    },
  },
  'GET /api/v1/resources/queues': {
    access: 'read-only',
    tag: 'configure and queues',
    summary: 'Every queue with its counts',
    responses: {
      200: 'Every queue with its partition count and message counts',
    },
    schemas: {
      200: z.object({
        queues: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            namespace: z.string(),
            task: z.string(),
            createdAt: z.string(),
            partitions: z.int(),
            messages: z.object({
              total: z.int(),
              pending: z.int(),
              processing: z.int(),
            }),
          }),
        ),
      }),
    },
  },
  'GET /api/v1/resources/queues/[queue]': {
    access: 'read-only',
    tag: 'configure and queues',
    summary: 'One queue with its options and partitions',
    responses: {
      200: 'The queue with its options and partitions',
      404: 'No such queue',
    },
    schemas: {
      200: z.object({
        id: z.string(),
        name: z.string(),
        namespace: z.string(),
        task: z.string(),
        configured: z.boolean(),
        createdAt: z.string(),
        options: queueOptions,
        partitions: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            createdAt: z.string(),
            headOffset: z.int(),
            lastPushAt: z.string().nullable(),
          }),
        ),
      }),
    },
  },
  'DELETE /api/v1/resources/queues/[queue]': {
    access: 'admin',
    tag: 'configure and queues',
    summary: 'Delete a queue and everything in it',
    responses: { 200: '{"deleted":true,"queue":"q","existed":true|false}' },
    schemas: {
      200: z.object({
        deleted: z.boolean(),
        queue: z.string(),
        existed: z.boolean(),
      }),
    },
  },

  // ---- resources
  'GET /api/v1/resources/overview': {
    access: 'read-only',
    tag: 'resources',
    summary: 'Counts, lag statistics and throughput of the whole broker',
    responses: { 200: 'Counts of queues, partitions, messages by state, lag and throughput' },
    schemas: {
      200: z.object({
        queues: z.int(),
        partitions: z.int(),
        namespaces: z.int(),
        tasks: z.int(),
        messages: z.object({
          total: z.int(),
          pending: z.int(),
          processing: z.int(),
          completed: z.int(),
          failed: z.int(),
          deadLetter: z.int(),
        }),
        lag: z.object({
          time: z.object({
            avg: z.number(),
            median: z.number(),
            min: z.number(),
            max: z.number(),
          }),
          offset: z.object({
            avg: z.number(),
            median: z.number(),
            min: z.number(),
            max: z.number(),
          }),
        }),
        throughput: z.object({
          ingestedPerSecond: z.number(),
          processedPerSecond: z.number(),
        }),
        timestamp: z.string(),
      }),
    },
  },
  'GET /api/v1/resources/namespaces': {
    access: 'read-only',
    tag: 'resources',
    summary: 'Per namespace: queues, partitions, messages',
    responses: { 200: '{namespaces:[...]}' },
    schemas: {
      200: z.object({
        namespaces: z.array(
          z.object({
            namespace: z.string(),
            queues: z.int(),
            partitions: z.int(),
            messages: z.object({
              total: z.int(),
              pending: z.int(),
            }),
          }),
        ),
      }),
    },
  },
  'GET /api/v1/resources/tasks': {
    access: 'read-only',
    tag: 'resources',
    summary: 'Per task: queues, partitions, messages',
    responses: { 200: '{tasks:[...]}' },
    schemas: {
      200: z.object({
        tasks: z.array(
          z.object({
            task: z.string(),
            queues: z.int(),
            partitions: z.int(),
            messages: z.object({
              total: z.int(),
              pending: z.int(),
            }),
          }),
        ),
      }),
    },
  },

  // ---- consumer groups
  'GET /api/v1/consumer-groups': {
    access: 'read-only',
    tag: 'consumer groups',
    summary: 'One entry per (group, queue)',
    responses: { 200: 'One entry per (group, queue)' },
    schemas: {
      200: z.array(
        z.object({
          name: z.string(),
          queueName: z.string().nullable(),
          partitions: z.int(),
          totalLag: z.int(),
          oldestUnconsumedAgeSeconds: z.number(),
          subscription: z
            .object({
              mode: z.string(),
              startAt: z.string().nullable(),
            })
            .nullable(),
        }),
      ),
    },
  },
  'GET /api/v1/consumer-groups/lagging': {
    access: 'read-only',
    tag: 'consumer groups',
    summary: 'Partitions whose oldest unconsumed message is older than minLagSeconds (snake_case)',
    query: lagQuery,
    params: [
      {
        name: 'minLagSeconds',
        description: 'Partitions whose oldest unconsumed message is older than this. Default 3600.',
      },
      { name: 'limit', description: 'Default 1000, at most 10000.' },
    ],
    responses: {
      200: 'The lagging partitions, oldest first (snake_case, as Queen MQ answers)',
    },
    schemas: {
      200: z.array(
        z.object({
          consumer_group: z.string(),
          queue_name: z.string(),
          partition_name: z.string(),
          partition_id: z.string(),
          offset_lag: z.int(),
          time_lag_seconds: z.number(),
          oldest_unconsumed_at: z.string(),
          last_consumed_at: z.string().nullable(),
        }),
      ),
    },
  },
  'GET /api/v1/consumer-groups/[group]': {
    access: 'read-only',
    tag: 'consumer groups',
    summary: "One group's queues and partitions",
    responses: {
      200: 'The group per queue: its lag, and per partition its cursor, lease and pause',
      404: 'No such group',
    },
    schemas: {
      200: z.object({
        consumerGroup: z.string(),
        queues: z.array(
          z.object({
            queueName: z.string().nullable(),
            totalLag: z.int(),
            partitions: z.array(
              z.object({
                partitionId: z.string(),
                partition: z.string(),
                committedOffset: z.int(),
                headOffset: z.int(),
                lag: z.int(),
                lease: z
                  .object({
                    leaseId: z.string(),
                    expiresAt: z.string().nullable(),
                    holder: z.string().nullable(),
                    live: z.boolean(),
                  })
                  .nullable(),
                paused: z.boolean(),
              }),
            ),
          }),
        ),
      }),
    },
  },
  'POST /api/v1/consumer-groups/[group]/subscription': {
    access: 'read-write',
    tag: 'consumer groups',
    summary: 'Create or move a durable subscription',
    body: subscriptionBody,
    example: { queue: 'openapi.q', subscriptionMode: 'new', subscriptionFrom: 'now' },
    responses: {
      200: 'The subscription now; with subscriptionTimestamp, how many records moved',
    },
    schemas: {
      200: z.union([
        z.object({
          success: z.boolean(),
          consumerGroup: z.string(),
          queueName: z.string(),
          mode: z.string(),
          startAt: iso.nullable(),
        }),
        z
          .object({ success: z.boolean(), consumerGroup: z.string(), subscriptionsUpdated: z.int() })
          .describe('with subscriptionTimestamp'),
      ]),
    },
  },
  'DELETE /api/v1/consumer-groups/[group]': {
    access: 'admin',
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
    responses: { 200: 'How many cursors were dropped, and whether the subscription went too' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        consumerGroup: z.string(),
        deletedPartitions: z.int(),
        metadataDeleted: z.boolean(),
      }),
    },
  },
  'DELETE /api/v1/consumer-groups/[group]/queues/[queue]': {
    access: 'admin',
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
    responses: { 200: 'How many cursors were dropped, and whether the subscription went too' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        consumerGroup: z.string(),
        deletedPartitions: z.int(),
        metadataDeleted: z.boolean(),
      }),
    },
  },

  // ---- operator actions
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek': {
    access: 'admin',
    tag: 'operator actions',
    summary: "Move a group's cursors on a queue (ends live leases, audited)",
    body: seekBody,
    example: SEEK_EXAMPLE,
    responses: { 200: 'How many cursors moved', 404: 'No such queue' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        consumerGroup: z.string(),
        queueName: z.string().nullable(),
        partitionsUpdated: z.int(),
      }),
    },
  },
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek': {
    access: 'admin',
    tag: 'operator actions',
    summary: "Move a group's cursor on one partition",
    body: seekBody,
    example: SEEK_EXAMPLE,
    responses: {
      200: 'Where the cursor moved',
      404: '{"success":false,"error":"Partition not found"}',
    },
    schemas: {
      200: z.object({
        success: z.boolean(),
        consumerGroup: z.string(),
        queueName: z.string().nullable(),
        partitionName: z.string().nullable(),
        cursorMovedTo: z.int(),
      }),
    },
  },
  'GET /api/v1/system/maintenance/pop': {
    access: 'read-only',
    tag: 'operator actions',
    summary: 'Whether pop maintenance is on',
    responses: { 200: '{"popMaintenanceMode":false}' },
    schemas: {
      200: z.object({
        popMaintenanceMode: z.boolean(),
      }),
    },
  },
  'POST /api/v1/system/maintenance/pop': {
    access: 'admin',
    tag: 'operator actions',
    summary: 'Turn pop maintenance on or off (audited)',
    body: maintenanceBody,
    example: { enabled: false, reason: 'done' },
    responses: { 200: '{"popMaintenanceMode":true|false}' },
    schemas: {
      200: z.object({
        popMaintenanceMode: z.boolean(),
      }),
    },
  },
  'POST /api/v1/cursors/[partitionId]/[group]/pause': {
    access: 'admin',
    tag: 'operator actions',
    summary: 'Pause or resume one (partition, group)',
    body: pauseBody,
    example: { paused: false },
    responses: { 200: 'The pause as it is now', 404: 'No such partition' },
    schemas: {
      200: z.object({
        partitionId: z.string(),
        consumerGroup: z.string(),
        paused: z.boolean(),
        reason: z.string().nullable(),
        until: z.string().nullable(),
      }),
    },
  },
  'POST /api/v1/cursors/[partitionId]/[group]/set-aside': {
    access: 'admin',
    tag: 'operator actions',
    summary:
      "A way out for a poison message: move it to the group's dead letters or skip it (ends the lease on it, fenced; audited)",
    body: setAsideBody,
    example: { action: 'skip', reason: 'crashes the consumer' },
    responses: {
      200: 'The message set aside, the committed offset now, and the lease it ended, if any',
      404: 'No such partition, message, or cursor of the group',
      409: '{error, currentLeaseId, offset?, transactionId?, holder?, claimedAt?, expiresAt?, deliveries?, heldUntil?}: the group is done with it, has nothing pending, or another lease holds it than the one given (with hold: true, the cursor is held until heldUntil, so the same call with currentLeaseId acts)',
    },
    schemas: {
      200: z.object({
        queue: z.string(),
        partition: z.string(),
        partitionId: uuid,
        group: z.string(),
        offset: z.int(),
        transactionId: z.string(),
        committed: z.int(),
        failures: z.int(),
        deliveries: z.int(),
        holder: z.string().nullable(),
        leaseEnded: z.boolean().optional(),
        leaseId: z.string().optional(),
        leaseExpired: z.boolean().optional(),
        partitions: z
          .array(
            z.object({
              partitionId: uuid,
              queue: z.string(),
              partition: z.string(),
              group: z.string(),
              from: z.int(),
              to: z.int(),
            }),
          )
          .optional(),
      }),
    },
  },
  'POST /api/v1/leases/release': {
    access: 'admin',
    tag: 'operator actions',
    summary: 'Force release several leases with one reason (one audit entry per lease)',
    body: bulkReleaseBody,
    example: { leaseIds: ['00000000-0000-7000-8000-000000000000'], reason: 'worker-7 died' },
    responses: { 200: 'How many leases were released, and one result per lease id in the order given' },
    schemas: {
      200: z.object({
        released: z.int(),
        results: z.array(
          z.object({
            leaseId: z.string(),
            released: z.boolean(),
            error: z.string().nullable(),
            partitions: z.array(
              z.object({
                partitionId: z.string(),
                consumerGroup: z.string(),
                queue: z.string(),
                partition: z.string(),
                span: z.object({
                  from: z.int(),
                  to: z.int(),
                }),
                holder: z.string().nullable(),
                expired: z.boolean(),
              }),
            ),
          }),
        ),
      }),
    },
  },
  'GET /api/v1/events': {
    access: 'read-only',
    tag: 'operator actions',
    summary: 'Server-sent events: pushes, claims, acks, releases, expiries, pauses, maintenance',
    produces: 'text/event-stream',
    params: [
      { name: 'queue', schema: str, description: 'Only events of this queue.' },
      { name: 'group', schema: str, description: 'Only events of this group.' },
    ],
    responses: { 200: 'An event stream of `data: {json}` lines' },
    schemas: { 200: z.string().describe('an event stream of `data: {json}` lines') },
  },
  'GET /api/v1/audit': {
    access: 'read-only',
    tag: 'operator actions',
    summary: 'The audit log, newest first (by time, then id)',
    query: auditQuery,
    params: [
      { name: 'target', description: 'A part of the target, any case (a lease id, a queue name).' },
      { name: 'queue', description: 'Entries whose details name this queue (exact), whatever their target.' },
      { name: 'group', description: 'Entries whose details name this group (exact).' },
      { name: 'partitionId', description: 'Entries whose details name this partition (exact).' },
      { name: 'limit', description: 'Default 100, at most 1000.' },
      {
        name: 'before',
        description: 'An entry id (the `next` of the page before): the entries older than it (the next page).',
      },
    ],
    responses: {
      200: 'A page of entries, newest first; `next`: the id to pass as `before` for the next page, or null',
    },
    schemas: {
      200: z.object({
        entries: z.array(
          z.object({
            id: z.string(),
            at: z.string(),
            actor: z.string(),
            action: z.string(),
            targetType: z.string(),
            target: z.string(),
            reason: z.string().nullable(),
            result: z.string(),
            details: z.unknown(),
          }),
        ),
        next: z.string().nullable(),
      }),
    },
  },
  'GET /api/v1/stats': {
    access: 'read-only',
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
      200: 'One series per queue (or group), as columns: epoch seconds, then per-second rates and lag',
      404: 'No such queue, or no such group on it',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        minutes: z.number(),
        sampleSeconds: z.number(),
        series: z.array(trendSeries),
      }),
    },
  },
  'GET /api/v1/consumers': {
    access: 'read-only',
    tag: 'rates and consumers',
    summary: 'Lease holders: what each holds now, and its acks, failures and expired leases of the last hour',
    query: consumersQuery,
    params: [{ name: 'pageSize', description: 'Default 100, at most 1000.' }],
    responses: {
      200: 'A page of holders, most recently seen first; `client`: its pop requests of the last 5 minutes, or null',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        since: z.string(),
        total: z.int(),
        consumers: z.array(
          z.object({
            holder: z.string().nullable(),
            leases: z.int(),
            partitions: z.int(),
            messages: z.int(),
            expiredNow: z.int(),
            lastSeenAt: z.string().nullable(),
            acked: z.int(),
            failed: z.int(),
            expired: z.int(),
            released: z.int(),
            silent: z.boolean(),
            silentWhy: z.enum(['expired', 'quiet']).nullable(),
            quietSeconds: z.number().nullable(),
            client: z
              .object({
                address: z.string().nullable(),
                userAgent: z.string().nullable(),
                pops: z.number(),
                emptyPops: z.number(),
                lastPopAt: z.string(),
              })
              .nullable(),
          }),
        ),
      }),
    },
  },

  // ---- dead letters
  'GET /api/v1/dlq': {
    access: 'read-only',
    tag: 'dead letters',
    summary: 'Dead letters, newest failure first',
    query: deadLetterQuery,
    params: [
      { name: 'queue', description: 'Exactly this queue.' },
      { name: 'consumerGroup', description: 'Exactly this group (`__QUEUE_MODE__`: queue mode).' },
      { name: 'partition', description: 'Exactly this partition.' },
      { name: 'limit', description: 'Default 100, at most 1000.' },
      { name: 'offset', description: 'Default 0.' },
      { name: 'error', description: 'A part of the last error, any case (`%` and `_` are plain characters).' },
      {
        name: 'errorIs',
        description: "The whole last error, exactly ('' for none): one group of /dead-letters/errors.",
      },
      { name: 'since', description: 'Failed at or after (ISO 8601 with a zone).' },
      { name: 'until', description: 'Failed before (ISO 8601 with a zone).' },
    ],
    responses: { 200: 'A page of dead letters, newest failure first, and where it stands in the whole list' },
    schemas: {
      200: z.object({
        messages: z.array(
          z.object({
            id: z.string(),
            transactionId: z.string(),
            partitionId: z.string(),
            queue: z.string(),
            partition: z.string(),
            consumerGroup: z.string(),
            errorMessage: z.string().nullable(),
            retryCount: z.int(),
            data: z.unknown(),
            producerSub: z.string().nullable(),
            createdAt: z.string(),
            failedAt: z.string(),
            offset: z.int(),
          }),
        ),
        pagination: z.object({
          limit: z.int(),
          offset: z.int(),
          total: z.int(),
        }),
      }),
    },
  },
  'POST /api/v1/dlq/requeue': {
    access: 'admin',
    tag: 'dead letters',
    summary:
      'Requeue dead letters as new messages of their partitions, for the groups whose dead letters they are only (every other group counts the copy as done; audited)',
    body: deadLetterActionBody,
    example: {
      items: [{ partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: 'g', offset: 1 }],
      reason: 'fixed the consumer',
    },
    responses: {
      200: 'One result per dead letter, in request order; with dryRun, what would be done, per queue and other group',
      409: 'A queue with maxSize would overflow: nothing is requeued',
    },
    schemas: {
      200: z.union([
        deadLetterPreview,
        z.object({
          requeued: z.int(),
          results: z.array(
            deadLetterResult.extend({
              newTransactionId: z.string().nullish(),
              newMessageId: z.string().nullish(),
              newOffset: z.int().nullish(),
              doneFor: z.array(z.string()).nullish(),
            }),
          ),
        }),
      ]),
    },
  },
  'POST /api/v1/dlq/discard': {
    access: 'admin',
    tag: 'dead letters',
    summary: 'Discard dead letters (their messages stay done for their groups; audited)',
    body: deadLetterActionBody,
    example: {
      items: [{ partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: 'g', offset: 1 }],
      reason: 'poison message, not needed',
    },
    responses: {
      200: 'One result per dead letter, in request order; with dryRun, what would be done, per queue',
    },
    schemas: {
      200: z.union([deadLetterPreview, z.object({ discarded: z.int(), results: z.array(deadLetterResult) })]),
    },
  },

  // ---- traces
  'POST /api/v1/traces': {
    access: 'read-write',
    tag: 'traces',
    summary: 'Record a trace event on a message (what msg.trace() sends)',
    body: traceBody,
    example: { transactionId: 't1', partitionId: '00000000-0000-0000-0000-000000000000', data: { step: 1 } },
    responses: { 200: '{"success":true,"traceId":"..."}', 404: '{"success":false,"error":"Message not found"}' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        traceId: z.string().nullable(),
      }),
    },
  },
  'GET /api/v1/traces/[partitionId]/[transactionId]': {
    access: 'read-only',
    tag: 'traces',
    summary: "A message's trace events, oldest first",
    responses: { 200: '{traces[], count}', 404: 'No such message' },
    schemas: {
      200: z.object({
        traces: z.array(
          z.object({
            id: z.string(),
            eventType: z.string(),
            consumerGroup: z.string(),
            data: z.unknown(),
            traceNames: z.array(z.string()),
            createdAt: z.string(),
          }),
        ),
        count: z.int(),
      }),
    },
  },
  'GET /api/v1/traces/by-name/[name]': {
    access: 'read-only',
    tag: 'traces',
    summary: 'Trace events of one trace name',
    query: namePage,
    params: [
      { name: 'limit', description: 'Default 100.' },
      { name: 'offset', description: 'Default 0.' },
    ],
    responses: { 200: 'A page of the trace events with this name' },
    schemas: {
      200: z.object({
        traces: z.array(
          z.object({
            id: z.string(),
            transactionId: z.string(),
            partitionId: z.string(),
            queue: z.string(),
            partition: z.string(),
            eventType: z.string(),
            consumerGroup: z.string(),
            data: z.unknown(),
            traceNames: z.array(z.string()),
            createdAt: z.string(),
          }),
        ),
        count: z.int(),
        total: z.int(),
        limit: z.int(),
        offset: z.int(),
      }),
    },
  },
  'GET /api/v1/traces/names': {
    access: 'read-only',
    tag: 'traces',
    summary: 'Trace names in use',
    query: namePage,
    params: [
      { name: 'limit', description: 'Default 50.' },
      { name: 'offset', description: 'Default 0.' },
    ],
    responses: { 200: 'A page of trace names, most recently seen first' },
    schemas: {
      200: z.object({
        traceNames: z.array(
          z.object({
            traceName: z.string(),
            traceCount: z.int(),
            messageCount: z.int(),
            lastSeen: z.string().nullable(),
          }),
        ),
        count: z.int(),
        total: z.int(),
        limit: z.int(),
        offset: z.int(),
      }),
    },
  },

  // ---- messages
  'GET /api/v1/messages': {
    access: 'read-only',
    tag: 'messages',
    summary: 'Messages pushed in a time window (default: the last hour), newest first, with their status',
    query: messageQuery,
    params: [
      {
        name: 'q',
        description:
          "A part of the payload's JSON text, any case (the dashboard's message browser); an encrypted queue's payloads are not searched.",
      },
      { name: 'queue', description: 'Exactly this queue.' },
      { name: 'partition', description: 'Exactly this partition.' },
      { name: 'ns', description: 'Queues of exactly this namespace.' },
      { name: 'task', description: 'Queues of exactly this task.' },
      { name: 'consumerGroup', description: 'Status as seen by this group.' },
      { name: 'status', description: '`pending`, `processing`, `completed` or `dead_letter`.' },
      { name: 'from', description: 'ISO 8601 with a zone. Default: an hour ago. After `to`: 400.' },
      { name: 'to', description: 'ISO 8601 with a zone. Default: now.' },
      { name: 'limit', description: 'Default 200, at most 1000.' },
      { name: 'offset', description: 'Default 0, at most 100000.' },
    ],
    responses: { 200: '{messages[]}' },
    schemas: {
      200: z.object({
        messages: z.array(
          z.object({
            id: z.string(),
            transactionId: z.string(),
            partitionId: z.string(),
            queuePath: z.string(),
            queue: z.string(),
            partition: z.string(),
            namespace: z.string(),
            task: z.string(),
            status: z.string(),
            traceId: z.string().nullable(),
            producerSub: z.string().nullable(),
            createdAt: z.string(),
            leaseExpiresAt: z.string().nullable(),
          }),
        ),
        pagination: z.object({
          limit: z.int(),
          offset: z.int(),
          from: z.string(),
          to: z.string(),
        }),
      }),
    },
  },
  'GET /api/v1/messages/[partitionId]/[transactionId]': {
    access: 'read-only',
    tag: 'messages',
    summary: 'One message with its per-group state, deliveries and failures',
    responses: {
      200: 'The message with its state per group',
      404: 'No such message',
    },
    schemas: {
      200: z.object({
        id: z.string(),
        transactionId: z.string(),
        partitionId: z.string(),
        partition: z.string(),
        queue: z.string(),
        offset: z.int(),
        createdAt: z.string(),
        traceId: z.string().nullable(),
        producerSub: z.string().nullable(),
        data: z.unknown(),
        consumerGroups: z.array(
          z.object({
            name: z.string(),
            state: z.string(),
            deliveries: z.int(),
            failures: z.int(),
            lastError: z.string().nullable(),
            leaseId: z.string().nullable(),
            leaseExpiresAt: z.string().nullable(),
            lease: z
              .object({
                leaseId: z.string(),
                holder: z.string().nullable(),
                expiresAt: z.string().nullable(),
                expired: z.boolean(),
              })
              .nullable(),
            attempts: z.array(
              z.object({
                attempt: z.int(),
                error: z.string().nullable(),
                at: z.string(),
              }),
            ),
          }),
        ),
        deliveries: z.array(
          z.object({
            group: z.string().nullable(),
            leaseId: z.string().nullable(),
            holder: z.string().nullable(),
            from: z.int(),
            to: z.int(),
            claimedAt: z.string(),
            expiresAt: z.string().nullable(),
            extensions: z.int(),
            endedAt: z.string().nullable(),
            ended: z.string(),
          }),
        ),
      }),
    },
  },
  'DELETE /api/v1/messages/[partitionId]/[transactionId]': {
    access: 'admin',
    tag: 'messages',
    summary: 'Delete one message (audited)',
    params: [DELETE_REASON],
    responses: { 200: 'The message deleted', 404: 'No such message' },
    schemas: {
      200: z.object({
        success: z.boolean(),
        partitionId: z.string(),
        transactionId: z.string(),
      }),
    },
  },

  // ---- dashboard reads
  'GET /api/dashboard/overview': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: "The dashboard's overview",
    responses: { 200: 'Overview figures' },
    schemas: {
      200: z.object({
        now: z.string(),
        tookMs: z.number(),
        maintenance: z.object({
          enabled: z.boolean(),
          reason: z.string().nullable(),
          by: z.string().nullable(),
          at: z.string().nullable(),
        }),
        queues: z.array(
          z.object({
            name: z.string(),
            namespace: z.string(),
            task: z.string(),
            leaseTime: z.int(),
            partitions: z.int(),
            messages: z.int(),
            groups: z.int(),
            pending: z.int(),
            oldestPendingSeconds: z.number().nullable(),
            liveLeases: z.int(),
            expiredLeases: z.int(),
            stuckLeases: z.int(),
            redeliveries: z.int(),
            deadLetters: z.int(),
            paused: z.int(),
            problems: z.array(
              z.object({
                level: z.string(),
                text: z.string(),
                href: z.string(),
              }),
            ),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/queues/[queue]': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: "The dashboard's queue page: partitions × groups, paged",
    query: queuePageQuery,
    params: [
      { name: 'group', description: 'Exactly this group.' },
      { name: 'partition', description: 'Partitions containing this text, in any case (`p-1` also lists `p-10`).' },
      { name: 'partitionIs', description: 'Exactly this partition (what links use).' },
    ],
    responses: { 200: 'The queue page', 404: 'No such queue' },
    schemas: {
      200: z.object({
        now: z.string(),
        tookMs: z.number(),
        queue: z.object({
          name: z.string(),
          namespace: z.string(),
          task: z.string(),
          leaseTime: z.int(),
          partitions: z.int(),
          groups: z.array(z.string()),
          storage: z.object({
            retentionSeconds: z.number().nullable(),
            completedRetentionSeconds: z.number().nullable(),
            maxWaitTimeSeconds: z.number().nullable(),
            maxSize: z.number().nullable(),
            ttl: z.int().nullable(),
            stored: z.int(),
            bytes: z.int(),
            lastRun: z.object({ at: iso, deleted: z.int(), evicted: z.int() }).nullable(),
          }),
        }),
        params: z.object({
          page: z.int(),
          pageSize: z.int(),
          sort: z.string(),
        }),
        total: z.int(),
        rows: z.array(
          z.object({
            partitionId: z.string(),
            partition: z.string(),
            group: z.string().nullable(),
            head: z.int(),
            committed: z.int(),
            leaseEnd: z.int().nullable(),
            lag: z.int(),
            timeLagSeconds: z.number().nullable(),
            leaseId: z.string().nullable(),
            leaseState: z.string().nullable(),
            holder: z.string().nullable(),
            acquiredAt: z.string().nullable(),
            expiresAt: z.string().nullable(),
            leaseSeconds: z.number().nullable(),
            extensions: z.int(),
            ackedInLease: z.int(),
            deliveries: z.int(),
            redeliveries: z.int(),
            failures: z.int(),
            deadLetters: z.int(),
            leaseExpiries: z.int(),
            paused: z.boolean(),
            pausedReason: z.string().nullable(),
            pausedBy: z.string().nullable(),
            pausedUntil: z.string().nullable(),
            lastPushAt: z.string().nullable(),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/maintenance': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: 'Maintenance jobs and their last runs',
    responses: { 200: 'Maintenance state' },
    schemas: {
      200: z.object({
        now: z.string(),
        maintenance: z.object({
          enabled: z.boolean(),
          reason: z.string().nullable(),
          by: z.string().nullable(),
          at: z.string().nullable(),
        }),
      }),
    },
  },
  'GET /api/dashboard/activity': {
    access: 'read-only',
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
      200: 'Per partition asked for, what happened since `since`',
    },
    schemas: {
      200: z.object({
        now: iso,
        since: iso,
        partitions: z.array(
          z.object({
            partitionId: uuid,
            queue: z.string(),
            partition: z.string(),
            pushed: z.int(),
            claimed: z.int(),
            acked: z.int(),
            failed: z.int(),
            expired: z.int(),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/recent-claims': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: "The last 50 claims of the last 10 minutes, newest first: the Live page's history when it opens",
    query: recentQuery,
    params: [
      { name: 'queue', description: 'One queue (exact).' },
      { name: 'group', description: 'One group (exact).' },
    ],
    responses: {
      200: 'The last claims, newest first, marked as from before the page opened',
    },
    schemas: {
      200: z.object({
        now: iso,
        events: z.array(
          z.object({
            type: z.literal('claim'),
            at: iso,
            earlier: z.literal(true),
            group: z.string(),
            holder: z.string().nullable(),
            leaseId: z.string().nullable(),
            autoAck: z.boolean(),
            partitions: z.array(
              z.object({ queue: z.string(), partition: z.string(), partitionId: uuid, count: z.int() }),
            ),
            ended: z.string().nullable(),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/groups': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary:
      'Every consumer group with its queues: lag in messages and time, lag trend, members, leases, pauses, subscription',
    query: groupsQuery,
    params: [
      { name: 'group', description: 'One group (exact).' },
      { name: 'minutes', description: 'The trend window, default 60; at most STATS_RETENTION_HOURS × 60.' },
    ],
    responses: {
      200: 'Every group with its lag, trend, members, leases and pauses, per queue too; growing lags first',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        minutes: z.number(),
        memberMinutes: z.number(),
        groups: z.array(
          z.object({
            group: z.string().nullable(),
            lag: z.int().nullable(),
            lagSeconds: z.number().nullable(),
            members: z.array(
              z.object({
                holder: z.string().nullable(),
                seenAt: z.string(),
              }),
            ),
            liveLeases: z.int(),
            expiredLeases: z.int(),
            paused: z.int(),
            growing: z.boolean().nullable(),
            queues: z.array(
              z.object({
                queue: z.string(),
                partitions: z.int(),
                lag: z.int().nullable(),
                lagSeconds: z.number().nullable(),
                liveLeases: z.int(),
                expiredLeases: z.int(),
                paused: z.int(),
                subscription: z.object({ mode: z.string(), startAt: iso.nullable() }).nullable(),
                trend: z.array(z.tuple([z.number(), z.number()])).describe('[epoch seconds, lag] pairs'),
                growing: z.object({ from: z.number(), to: z.number() }).nullable(),
              }),
            ),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/replica': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary:
      "Where the dashboard's reads come from: the primary, or the replica DATABASE_READ_URL names with how far behind it is (WAL bytes not replayed, and seconds: 0 when caught up, else the age of the last transaction replayed)",
    responses: { 200: 'The read source and its lag' },
    schemas: { 200: readSource },
  },
  'GET /api/dashboard/process': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary:
      'This server process: uptime, memory, parked long polls per scope, their wake-ups and pops served per wake-up',
    responses: { 200: 'Process facts' },
    schemas: {
      200: z.object({
        pid: z.int(),
        uptimeSeconds: z.number(),
        rssBytes: z.int(),
        heapUsedBytes: z.int(),
        heapTotalBytes: z.int(),
        externalBytes: z.int(),
        parkedPolls: z.int(),
        parkedScopes: z.int(),
        parkedByScope: z.array(z.unknown()).describe('The 20 scopes with the most parked pops, with how many each'),
        wakeUps: z.record(z.string(), z.number()),
        parkedClaims: z.int(),
        parkedServed: z.int(),
        claimsPerWakeUp: z.number().describe('Parked pops served per wake-up, the average of the recent ones'),
        rechecks: z.int(),
        recheckedScopes: z.int(),
      }),
    },
  },
  'GET /api/dashboard/dead-letter-errors': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary:
      'Dead letters grouped by their last error text, most frequent first (50 groups a page): count, first and last failure, queues and groups',
    query: deadLetterErrorsQuery,
    responses: {
      200: "The dead letters grouped by error text, most first; a group's error is POST /api/v1/dlq/requeue|discard's filter.errorIs",
    },
    schemas: {
      200: z.object({
        total: z.int(),
        deadLetters: z.int(),
        groups: z.array(
          z.object({
            error: z.string(),
            deadLetters: z.int(),
            firstFailedAt: z.string(),
            lastFailedAt: z.string(),
            queues: z.array(z.string()),
            queueCount: z.int(),
            consumerGroups: z.array(z.string()),
            consumerGroupCount: z.int(),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/system': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary:
      "The System page: database size and largest tables, connections by state, the oldest open transactions, the lifecycle job's last 20 runs, autovacuum, and every live instance's process figures",
    responses: {
      200: 'The database, its largest tables, connections, oldest transactions, the lifecycle job, autovacuum and every live instance',
    },
    schemas: {
      200: z.object({
        now: z.string(),
        database: z.object({ name: z.string(), sizeBytes: z.number(), version: z.string(), maxConnections: z.int() }),
        largest: z.array(z.object({ name: z.string(), bytes: z.number() })),
        connections: z.array(z.object({ state: z.string().nullable(), count: z.int() })),
        transactions: z.array(
          z.object({
            pid: z.int(),
            state: z.string().nullable(),
            application: z.string(),
            client: z.string().nullable(),
            seconds: z.number(),
            waiting: z.string().nullable(),
            query: z.string(),
          }),
        ),
        lifecycle: z.object({ runs: z.array(z.unknown()) }),
        autovacuum: z.object({
          enabled: z.boolean(),
          running: z.int(),
          tables: z.array(
            z.object({
              name: z.string(),
              liveRows: z.number(),
              deadRows: z.number(),
              lastAutovacuum: z.string().nullable(),
              lastAutoanalyze: z.string().nullable(),
              autovacuumCount: z.number(),
            }),
          ),
        }),
        instances: z.array(
          z.object({
            id: z.string(),
            startedAt: z.string(),
            seenAt: z.string(),
            facts: z.record(z.string(), z.number()).nullable(),
          }),
        ),
      }),
    },
  },
  'GET /api/dashboard/pop-preview': {
    access: 'read-only',
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
      200: 'What the pop would answer (status 200 or 204, the empty reason as X-Queen-Empty, and why on a 204: a queue or partition that does not exist, or leases of other holders)',
      400: 'Neither queue, namespace nor task; or a query parameter that fails to parse',
    },
    schemas: {
      200: z.object({
        status: z.union([z.literal(200), z.literal(204)]),
        empty: z.enum(Object.keys(EMPTY_REASONS) as [EmptyReason, ...EmptyReason[]]).nullable(),
        body: dryRunPop.nullable(),
        why: z
          .object({
            reason: z.enum(['leased', ...Object.keys(IDLE_BECAUSE)] as [string, ...string[]]),
            text: z.string().describe('the explanation, in a sentence an operator reads'),
            group: z.string().optional(),
            held: z.int().optional().describe('how many leases hold the group’s pending messages'),
            leases: z
              .array(
                z.object({
                  partition: z.string(),
                  holder: z.string().nullable(),
                  expiresAt: z.string(),
                  leaseId: z.string(),
                }),
              )
              .optional()
              .describe('the first few of them, soonest to expire first'),
          })
          .nullable()
          .optional()
          .describe('on a 204: a queue or partition that does not exist, or the leases that hold the pending messages'),
      }),
    },
  },
  'GET /api/dashboard/pop-target': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: 'Whether a pop would create the queue or the group (the console asks first)',
    query: popTargetQuery,
    responses: { 200: 'Whether the queue and the group cursors exist' },
    schemas: {
      200: z.object({
        queue: z.string(),
        queueExists: z.boolean(),
        consumerGroup: z.string(),
        groupExists: z.boolean(),
      }),
    },
  },
  'GET /api/dashboard/queues/[queue]/partitions/[partition]': {
    access: 'read-only',
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
      200: 'The window of messages with each group state, and the offsets of the pages around it',
      404: 'No such partition, or the group has no cursor on it',
    },
    schemas: {
      200: z.object({
        queue: z.string(),
        partition: z.string(),
        partitionId: z.string(),
        head: z.int(),
        group: z.string().nullable(),
        from: z.int(),
        to: z.int(),
        limit: z.int(),
        prevFrom: z.int().nullable(),
        nextFrom: z.int().nullable(),
        groups: z.array(
          z.object({
            name: z.string(),
            committed: z.int(),
          }),
        ),
        messages: z.array(
          z.object({
            offset: z.int(),
            id: z.string(),
            transactionId: z.string(),
            createdAt: z.string(),
            preview: z.string(),
            states: z.array(
              z.object({
                group: z.string().nullable(),
                state: z.string(),
              }),
            ),
          }),
        ),
      }),
    },
  },
  'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview': {
    access: 'read-only',
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
      200: 'What the seek would move, in total and per partition of the page; `next`: the page after, or null',
      404: 'No such queue or partition',
    },
    schemas: {
      200: z.object({
        consumerGroup: z.string(),
        queueName: z.string().nullable(),
        partitionName: z.string().nullable(),
        target: z.union([z.object({ toEnd: z.boolean() }), z.object({ timestamp: iso.nullable() })]),
        partitions: z.int(),
        partitionsMoved: z.int(),
        skipped: z.int(),
        replayed: z.int(),
        leasesEnded: z.int(),
        changes: z.array(
          z.object({
            partition: z.string(),
            partitionId: z.string(),
            committed: z.int(),
            target: z.int(),
            skipped: z.int(),
            replayed: z.int(),
            endsLease: z.boolean(),
          }),
        ),
        changesTruncated: z.boolean(),
        next: z.string().nullable(),
      }),
    },
  },
  'GET /api/v1/search': {
    access: 'read-only',
    tag: 'dashboard reads',
    summary: 'Find a lease, message, transaction or queue by a pasted id or name',
    query: searchQuery,
    params: [
      { name: 'q', schema: str, description: 'A lease id, message id, transaction id, or the start of a queue name.' },
      { name: 'kind', description: '`queue`: queue names only (q may be empty).' },
      { name: 'limit', description: 'At most this many matches, 1–50. Default 20.' },
    ],
    responses: { 200: 'What the text matched, each with its dashboard page' },
    schemas: {
      200: z.object({
        q: z.string(),
        matches: z.array(
          z.object({
            kind: z.enum(['lease', 'message', 'transaction', 'holder', 'group', 'partition', 'queue']),
            label: z.string(),
            href: z.string(),
          }),
        ),
        truncated: z.boolean(),
      }),
    },
  },
} satisfies Record<string, RouteSpec>;

export type RouteKey = keyof typeof ROUTES;

/** `METHOD /pattern` → the level it needs: what route() applies. */
export const ACCESS: Record<string, Level> = Object.fromEntries(
  Object.entries(ROUTES).map(([key, route]) => [key, route.access]),
);

/** The rule of a route as the server matched it (method and folder pattern); undefined when it has no entry. */
export function ruleOf(method: string, pattern: string): { pattern: string; level: Level } | undefined {
  const level = ACCESS[`${method === 'HEAD' ? 'GET' : method} ${pattern}`];
  return level === undefined ? undefined : { pattern, level };
}
