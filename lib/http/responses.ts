// The code's result types fit the route table's answer schemas (lib/http/route-table.ts): tsc
// (npm run typecheck, next build) fails when a result type gains or changes a field the table does
// not describe.
import type { z } from 'zod';
import type { ROUTES } from './route-table';

export type Fits<Schema extends z.ZodType, Code extends z.output<Schema>> = Code;
type Out<
  K extends keyof typeof ROUTES,
  S extends keyof (typeof ROUTES)[K]['schemas'],
> = (typeof ROUTES)[K]['schemas'][S] extends z.ZodType ? (typeof ROUTES)[K]['schemas'][S] : never;

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
    Out<'GET /api/dashboard/replica', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/replica').readSource>>
  >,
  Fits<
    Out<'GET /api/dashboard/process', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/process').processFacts>>
  >,
  Fits<
    Out<'GET /api/dashboard/dead-letter-errors', 200>,
    Awaited<ReturnType<typeof import('@/lib/dashboard/dead-letter-errors').deadLetterErrors>>
  >,
  Fits<Out<'GET /api/dashboard/system', 200>, Awaited<ReturnType<typeof import('@/lib/dashboard/system').systemFacts>>>,
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
