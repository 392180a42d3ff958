// The success answers of every route, as zod schemas: the OpenAPI document's response schemas
// (lib/http/openapi.ts, z.toJSONSchema, output side), and the types the code's results are checked
// against at compile time (the assertions at the end of this file). tests/response-schemas.test.ts
// validates the real answers of every route against the document. A field a route may leave null
// is nullable here; free-form JSON (a message's payload, an audit entry's details) is unknown.
import { z } from 'zod';
import { queueOptions } from '@/lib/broker/options';

const iso = z.string().describe('ISO 8601 timestamp');
const uuid = z.string().describe('UUID');

export const popMessage = z.object({
  id: uuid,
  transactionId: z.string(),
  traceId: z.string().nullable(),
  data: z.unknown().describe('the payload as pushed'),
  producerSub: z.string().nullable(),
  createdAt: iso,
  partitionId: uuid,
  partition: z.string(),
  leaseId: z.string(),
  consumerGroup: z.string(),
});

/** 200 of every pop route (204 has no body). leaseId is empty with autoAck. */
export const popResponse = z.object({
  success: z.boolean(),
  queue: z.string(),
  partition: z.string(),
  partitionId: uuid,
  leaseId: z.string(),
  consumerGroup: z.string(),
  messages: z.array(popMessage),
  partitionsClaimed: z.int(),
});

/** What a pop would deliver (the console's dry run): no lease taken, so no lease id. */
const dryRunPop = popResponse.extend({
  leaseId: z.string().nullable(),
  messages: z.array(popMessage.extend({ leaseId: z.string().nullable() })),
});

export const pushResult = z.object({
  index: z.int(),
  transaction_id: z.string(),
  status: z.enum(['queued', 'duplicate']),
  message_id: uuid,
  partition_id: uuid,
  trace_id: z.string().nullable(),
  queueName: z.string(),
});

export const ackResult = z.object({
  index: z.int(),
  transactionId: z.string(),
  success: z.boolean(),
  error: z.string().nullable(),
  queueName: z.string().nullable(),
  partitionName: z.string().nullable(),
  leaseReleased: z.boolean(),
  dlq: z.boolean(),
});

export const trendSeries = z.object({
  queue: z.string(),
  group: z.string().nullable().describe('null: the queue as a whole'),
  at: z.array(z.number()).describe('epoch seconds'),
  pushed: z.array(z.number()),
  delivered: z.array(z.number()),
  acked: z.array(z.number()),
  failed: z.array(z.number()),
  lag: z.array(z.number()),
});

const session = z.object({
  authEnabled: z.boolean(),
  signedIn: z.boolean(),
  subject: z.string().nullish(),
  role: z.string().nullish(),
  expiresAt: iso.nullish(),
});

const deadLetterPreview = z.object({
  dryRun: z.literal(true),
  deadLetters: z.int(),
  messages: z.int(),
  notFound: z.int(),
  queues: z.array(
    z.object({ queue: z.string(), deadLetters: z.int(), messages: z.int(), otherGroups: z.array(z.string()) }),
  ),
});

const deadLetterResult = z.object({
  index: z.int(),
  partitionId: z.string(),
  consumerGroup: z.string(),
  offset: z.int(),
  success: z.boolean(),
  error: z.string().nullable(),
  queue: z.string().nullable(),
  partition: z.string().nullable(),
  transactionId: z.string().nullable(),
  lastError: z.string().nullable(),
  retryCount: z.int().nullable(),
});

const figuresOfGroup = z.object({
  consumerGroup: z.string(),
  delivered: z.number(),
  acked: z.number(),
  failed: z.number(),
  deadLettered: z.number(),
  lagMessages: z.number(),
  lagSeconds: z.number(),
  leases: z.object({ live: z.number(), expired: z.number() }),
  pausedCursors: z.number(),
});

/** Operation key (as lib/http/access.ts) → status → the answer's schema. */
export const RESPONSES = {
  'GET /health': {
    200: z.object({
      status: z.string(),
      database: z.string(),
    }),
  },
  'GET /ready': {
    200: z.object({
      status: z.string(),
      migrations: z.string(),
      database: z.string(),
    }),
  },
  'GET /metrics': {
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
    }),
  },
  'GET /api/auth/session': { 200: session },
  'POST /api/auth/session': { 200: session },
  'DELETE /api/auth/session': {
    200: z.object({
      signedIn: z.boolean(),
    }),
  },
  'POST /api/v1/configure': {
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
  'POST /api/v1/push': { 201: z.array(pushResult) },
  'GET /api/v1/pop/queue/[queue]': { 200: popResponse },
  'POST /api/v1/lease/[leaseId]/extend': {
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
  'POST /api/v1/ack': { 200: z.array(ackResult) },
  'POST /api/v1/ack/batch': { 200: z.array(ackResult) },
  'GET /api/v1/pop/queue/[queue]/partition/[partition]': { 200: popResponse },
  'GET /api/v1/pop': { 200: popResponse },
  'GET /api/v1/leases': {
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
          state: z.string(),
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
  'GET /api/v1/consumers': {
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
        }),
      ),
    }),
  },
  'GET /api/v1/consumer-groups/[group]': {
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
  'POST /api/v1/leases/[leaseId]/release': {
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
  'POST /api/v1/transaction': {
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
  'POST /api/v1/consumer-groups/[group]/subscription': {
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
  'POST /api/v1/traces': {
    200: z.object({
      success: z.boolean(),
      traceId: z.string().nullable(),
    }),
  },
  'GET /api/v1/traces/[partitionId]/[transactionId]': {
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
  'GET /api/v1/traces/by-name/[name]': {
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
  'GET /api/v1/traces/names': {
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
  'GET /api/v1/resources/queues': {
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
  'GET /api/v1/resources/queues/[queue]': {
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
  'GET /api/v1/resources/overview': {
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
  'GET /api/v1/resources/namespaces': {
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
  'GET /api/v1/resources/tasks': {
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
  'GET /api/v1/messages': {
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
  'GET /api/v1/messages/[partitionId]/[transactionId]': {
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
  'GET /api/v1/consumer-groups': {
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
  'GET /api/v1/consumer-groups/lagging': {
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
  'GET /api/v1/stats': {
    200: z.object({
      now: z.string(),
      minutes: z.number(),
      sampleSeconds: z.number(),
      series: z.array(trendSeries),
    }),
  },
  'GET /api/v1/search': {
    200: z.object({
      q: z.string(),
      matches: z.array(
        z.object({
          kind: z.string(),
          label: z.string(),
          href: z.string(),
        }),
      ),
      truncated: z.boolean(),
    }),
  },
  'GET /api/v1/dlq': {
    200: z.object({
      messages: z.array(
        z.object({
          id: z.string(),
          transactionId: z.string(),
          partitionId: z.string(),
          queue: z.string(),
          partition: z.string(),
          consumerGroup: z.string(),
          errorMessage: z.string(),
          retryCount: z.int().nullable(),
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
  'POST /api/v1/dlq/requeue': {
    200: z.union([
      deadLetterPreview,
      z.object({
        requeued: z.int(),
        results: z.array(
          deadLetterResult.extend({
            newTransactionId: z.string().nullish(),
            newMessageId: z.string().nullish(),
            newOffset: z.int().nullish(),
          }),
        ),
      }),
    ]),
  },
  'POST /api/v1/dlq/discard': {
    200: z.union([deadLetterPreview, z.object({ discarded: z.int(), results: z.array(deadLetterResult) })]),
  },
  'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview': {
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
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek': {
    200: z.object({
      success: z.boolean(),
      consumerGroup: z.string(),
      queueName: z.string().nullable(),
      partitionsUpdated: z.int(),
    }),
  },
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek': {
    200: z.object({
      success: z.boolean(),
      consumerGroup: z.string(),
      queueName: z.string().nullable(),
      partitionName: z.string().nullable(),
      cursorMovedTo: z.int(),
    }),
  },
  'GET /api/v1/system/maintenance/pop': {
    200: z.object({
      popMaintenanceMode: z.boolean(),
    }),
  },
  'POST /api/v1/system/maintenance/pop': {
    200: z.object({
      popMaintenanceMode: z.boolean(),
    }),
  },
  'POST /api/v1/cursors/[partitionId]/[group]/pause': {
    200: z.object({
      partitionId: z.string(),
      consumerGroup: z.string(),
      paused: z.boolean(),
      reason: z.string().nullable(),
      until: z.string().nullable(),
    }),
  },
  'GET /api/dashboard/overview': {
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
  'GET /api/dashboard/queues/[queue]': {
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
  'GET /api/dashboard/maintenance': {
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
  'GET /api/dashboard/process': {
    200: z.object({
      pid: z.int(),
      uptimeSeconds: z.number(),
      rssBytes: z.int(),
      heapUsedBytes: z.int(),
      heapTotalBytes: z.int(),
      externalBytes: z.int(),
      parkedPolls: z.int(),
      parkedScopes: z.int(),
      parkedByScope: z.array(z.unknown()),
      wakeUps: z.record(z.string(), z.number()),
      parkedClaims: z.int(),
      parkedServed: z.int(),
      claimsPerWakeUp: z.int(),
      rechecks: z.int(),
      recheckedScopes: z.int(),
    }),
  },
  'GET /api/dashboard/pop-preview': {
    200: z.object({
      status: z.union([z.literal(200), z.literal(204)]),
      empty: z.string().nullable(),
      body: dryRunPop.nullable(),
    }),
  },
  'GET /api/dashboard/pop-target': {
    200: z.object({
      queue: z.string(),
      queueExists: z.boolean(),
      consumerGroup: z.string(),
      groupExists: z.boolean(),
    }),
  },
  'GET /api/dashboard/queues/[queue]/partitions/[partition]': {
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
  'GET /api/v1/audit': {
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
  'DELETE /api/v1/messages/[partitionId]/[transactionId]': {
    200: z.object({
      success: z.boolean(),
      partitionId: z.string(),
      transactionId: z.string(),
    }),
  },
  'DELETE /api/v1/consumer-groups/[group]/queues/[queue]': {
    200: z.object({
      success: z.boolean(),
      consumerGroup: z.string(),
      deletedPartitions: z.int(),
      metadataDeleted: z.boolean(),
    }),
  },
  'DELETE /api/v1/consumer-groups/[group]': {
    200: z.object({
      success: z.boolean(),
      consumerGroup: z.string(),
      deletedPartitions: z.int(),
      metadataDeleted: z.boolean(),
    }),
  },
  'DELETE /api/v1/resources/queues/[queue]': {
    200: z.object({
      deleted: z.boolean(),
      queue: z.string(),
      existed: z.boolean(),
    }),
  },
  'GET /api/v1/openapi.json': {
    200: z.looseObject({
      openapi: z.string(),
      info: z.looseObject({ title: z.string(), version: z.string() }),
      paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    }),
  },
  'POST /streams/v1/queries': {
    200: z.object({
      success: z.boolean(),
      query_id: z.string(),
      name: z.string(),
      config_hash: z.string(),
      fresh: z.boolean(),
      reset: z.boolean(),
    }),
  },
  'POST /streams/v1/cycle': {
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
  'POST /streams/v1/state/get': {
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
  'POST /api/v1/streams/queries/[queryId]/reset': {
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
  'GET /api/dashboard/streams': {
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
  'POST /api/v1/cursors/[partitionId]/[group]/set-aside': {
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
  'POST /api/v1/leases/release': {
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
  'GET /api/dashboard/groups': {
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
  'GET /api/dashboard/activity': {
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
  'GET /api/dashboard/recent-claims': {
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
  'GET /metrics/prometheus': { 200: z.string().describe('Prometheus text exposition format') },
  'GET /api/v1/events': { 200: z.string().describe('an event stream of `data: {json}` lines') },
} satisfies Record<string, Record<number, z.ZodType>>;

// ---- the code's result types fit the schemas above: tsc (npm run typecheck, next build) fails when
// a result type gains or changes a field the document does not describe
export type Fits<Schema extends z.ZodType, Code extends z.output<Schema>> = Code;
type Out<
  K extends keyof typeof RESPONSES,
  S extends keyof (typeof RESPONSES)[K],
> = (typeof RESPONSES)[K][S] extends z.ZodType ? (typeof RESPONSES)[K][S] : never;

export type ResultTypesFit = [
  Fits<
    Out<'GET /api/dashboard/activity', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/activity').activity>>
  >,
  Fits<
    Out<'GET /api/dashboard/recent-claims', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/activity').recentClaims>>
  >,
  Fits<
    Out<'DELETE /api/v1/consumer-groups/[group]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/consumer-groups').deleteConsumerGroup>>
  >,
  Fits<
    Out<'DELETE /api/v1/consumer-groups/[group]/queues/[queue]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/consumer-groups').deleteConsumerGroup>>
  >,
  Fits<
    Out<'DELETE /api/v1/messages/[partitionId]/[transactionId]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/delete-message').deleteMessage>>
  >,
  Fits<
    Out<'DELETE /api/v1/resources/queues/[queue]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/queues').deleteQueue>>
  >,
  Fits<Out<'GET /api/auth/session', 200>, Awaited<ReturnType<typeof import('@/lib/http/session').sessionOf>>>,
  Fits<Out<'GET /api/dashboard/groups', 200>, Awaited<ReturnType<typeof import('@/lib/dashboard/groups').listGroups>>>,
  Fits<
    Out<'GET /api/dashboard/maintenance', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/overview').maintenanceState>>
  >,
  Fits<
    Out<'GET /api/dashboard/overview', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/overview').overview>>
  >,
  Fits<
    Out<'GET /api/dashboard/pop-target', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/pop-target').popTarget>>
  >,
  Fits<
    Out<'GET /api/dashboard/process', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/process').processFacts>>
  >,
  Fits<
    Out<'GET /api/dashboard/queues/[queue]', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/queue').queuePage>>
  >,
  Fits<
    Out<'GET /api/dashboard/queues/[queue]/partitions/[partition]', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/browse').browsePartition>>
  >,
  Fits<
    Out<'GET /api/dashboard/streams', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/streams').listStreamingQueries>>
  >,
  Fits<
    Out<'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/seek-preview').previewSeek>>
  >,
  Fits<
    Out<'GET /api/v1/consumers', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/consumers').listConsumers>>
  >,
  Fits<Out<'GET /api/v1/leases', 200>, Awaited<ReturnType<typeof import('@/lib/broker/leases').listLeases>>>,
  Fits<
    Out<'GET /api/v1/messages/[partitionId]/[transactionId]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/messages').getMessage>>
  >,
  Fits<
    Out<'GET /api/v1/resources/overview', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/resources').resourcesOverview>>
  >,
  Fits<
    Out<'GET /api/v1/resources/queues/[queue]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/queues').getQueue>>
  >,
  Fits<Out<'GET /api/v1/search', 200>, Awaited<ReturnType<typeof import('@/lib/dashboard/find-by-id').findById>>>,
  Fits<Out<'GET /api/v1/stats', 200>, Awaited<ReturnType<typeof import('@/lib/dashboard/trends').trends>>>,
  Fits<
    Out<'GET /api/v1/system/maintenance/pop', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/pop-maintenance').getPopMaintenance>>
  >,
  Fits<
    Out<'GET /api/v1/traces/[partitionId]/[transactionId]', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/traces').messageTraces>>
  >,
  Fits<Out<'POST /api/v1/ack', 200>, Awaited<ReturnType<typeof import('@/lib/broker/ack').ackOne>>>,
  Fits<Out<'POST /api/v1/ack/batch', 200>, Awaited<ReturnType<typeof import('@/lib/broker/ack').ackBatch>>>,
  Fits<Out<'POST /api/v1/configure', 200>, Awaited<ReturnType<typeof import('@/lib/broker/configure').configureQueue>>>,
  Fits<
    Out<'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/consumer-groups').seekPartition>>
  >,
  Fits<
    Out<'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/consumer-groups').seek>>
  >,
  Fits<
    Out<'POST /api/v1/consumer-groups/[group]/subscription', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/consumer-groups').setSubscription>>
  >,
  Fits<
    Out<'POST /api/v1/cursors/[partitionId]/[group]/pause', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/pause').setPause>>
  >,
  Fits<
    Out<'POST /api/v1/cursors/[partitionId]/[group]/set-aside', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/set-aside').setAside>>
  >,
  Fits<
    Out<'POST /api/v1/dlq/discard', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/dead-letter-actions').discardDeadLetters>>
  >,
  Fits<
    Out<'POST /api/v1/dlq/requeue', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/dead-letter-actions').requeueDeadLetters>>
  >,
  Fits<
    Out<'POST /api/v1/lease/[leaseId]/extend', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/leases').extendLease>>
  >,
  Fits<
    Out<'POST /api/v1/leases/[leaseId]/release', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/leases').releaseLease>>
  >,
  Fits<
    Out<'POST /api/v1/leases/release', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/leases').releaseLeases>>
  >,
  Fits<Out<'POST /api/v1/push', 201>, Awaited<ReturnType<typeof import('@/lib/broker/push').push>>>,
  Fits<
    Out<'POST /api/v1/system/maintenance/pop', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/pop-maintenance').setPopMaintenance>>
  >,
  Fits<Out<'POST /api/v1/traces', 200>, Awaited<ReturnType<typeof import('@/lib/broker/traces').recordTrace>>>,
  Fits<
    Out<'POST /api/v1/transaction', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/transaction').runTransaction>>
  >,
  Fits<Out<'POST /streams/v1/cycle', 200>, Awaited<ReturnType<typeof import('@/lib/broker/streams/cycle').runCycle>>>,
  Fits<
    Out<'POST /streams/v1/queries', 200>,
    Awaited<ReturnType<typeof import('@/lib/broker/streams/register').registerQuery>>
  >,
];
