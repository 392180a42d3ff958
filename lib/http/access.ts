// The one table of who may call what (DESIGN.md §4, http-api.md). Every route handler of the app
// has an entry, keyed by method and folder pattern; tests/access.test.ts fails when a route file
// and this table disagree, and route() refuses a request whose route has no entry.

export const ROLES = ['read-only', 'read-write', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export type Level = 'public' | Role;

export const ACCESS: Record<string, Level> = {
  'GET /health': 'public',
  'GET /ready': 'public',
  'GET /metrics/prometheus': 'public',
  'GET /metrics': 'public',
  'GET /api/v1/openapi.json': 'public',
  'GET /api/auth/session': 'public',
  'POST /api/auth/session': 'public',
  'DELETE /api/auth/session': 'public',

  'GET /api/v1/pop': 'read-write',
  'GET /api/v1/pop/queue/[queue]': 'read-write',
  'GET /api/v1/pop/queue/[queue]/partition/[partition]': 'read-write',
  'POST /api/v1/push': 'read-write',
  'POST /api/v1/ack': 'read-write',
  'POST /api/v1/ack/batch': 'read-write',
  'POST /api/v1/lease/[leaseId]/extend': 'read-write',
  'POST /api/v1/transaction': 'read-write',
  'POST /api/v1/configure': 'read-write',
  'POST /api/v1/consumer-groups/[group]/subscription': 'read-write',
  'POST /api/v1/traces': 'read-write',
  // the Streams API (spec/streams.md)
  'POST /streams/v1/queries': 'read-write',
  'POST /streams/v1/cycle': 'read-write',
  'POST /streams/v1/state/get': 'read-only',

  'GET /api/v1/resources/queues': 'read-only',
  'GET /api/v1/resources/queues/[queue]': 'read-only',
  'GET /api/v1/messages/[partitionId]/[transactionId]': 'read-only',
  'GET /api/v1/messages': 'read-only',
  'GET /api/v1/dlq': 'read-only',
  'GET /api/v1/traces/[partitionId]/[transactionId]': 'read-only',
  'GET /api/v1/traces/by-name/[name]': 'read-only',
  'GET /api/v1/traces/names': 'read-only',
  'GET /api/v1/resources/overview': 'read-only',
  'GET /api/v1/resources/namespaces': 'read-only',
  'GET /api/v1/resources/tasks': 'read-only',
  'GET /api/v1/consumer-groups/lagging': 'read-only',
  'GET /api/v1/consumer-groups': 'read-only',
  'GET /api/v1/consumer-groups/[group]': 'read-only',
  'GET /api/v1/system/maintenance/pop': 'read-only',
  'GET /api/v1/leases': 'read-only',
  'GET /api/v1/events': 'read-only',
  'GET /api/v1/audit': 'read-only',
  'GET /api/v1/stats': 'read-only',
  'GET /api/v1/consumers': 'read-only',
  'GET /api/dashboard/overview': 'read-only',
  'GET /api/dashboard/queues/[queue]': 'read-only',
  'GET /api/dashboard/maintenance': 'read-only',
  'GET /api/dashboard/process': 'read-only',
  'GET /api/dashboard/groups': 'read-only',
  'GET /api/dashboard/activity': 'read-only',
  'GET /api/dashboard/recent-claims': 'read-only',
  // the console's dry run: reads what a pop would take, writes nothing
  'GET /api/dashboard/pop-preview': 'read-only',
  // browsing, search and previews (issue 8): read-only, they move nothing
  'GET /api/dashboard/pop-target': 'read-only',
  'GET /api/dashboard/queues/[queue]/partitions/[partition]': 'read-only',
  'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview': 'read-only',
  'GET /api/v1/search': 'read-only',
  'GET /api/dashboard/streams': 'read-only',

  'DELETE /api/v1/resources/queues/[queue]': 'admin',
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek': 'admin',
  'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek': 'admin',
  'DELETE /api/v1/messages/[partitionId]/[transactionId]': 'admin',
  'DELETE /api/v1/consumer-groups/[group]': 'admin',
  'DELETE /api/v1/consumer-groups/[group]/queues/[queue]': 'admin',
  'POST /api/v1/system/maintenance/pop': 'admin',
  'POST /api/v1/leases/[leaseId]/release': 'admin',
  'POST /api/v1/cursors/[partitionId]/[group]/pause': 'admin',
  'POST /api/v1/cursors/[partitionId]/[group]/set-aside': 'admin',
  'POST /api/v1/leases/release': 'admin',
  'POST /api/v1/dlq/requeue': 'admin',
  'POST /api/v1/dlq/discard': 'admin',
  'POST /api/v1/streams/queries/[queryId]/reset': 'admin',
};

/** Whether a holder of `role` (none when signed out) may do what needs `level`. */
export function allows(role: Role | undefined, level: Level): boolean {
  if (level === 'public') return true;
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(level);
}

/** The rule of a route as the server matched it (method and folder pattern); undefined when it has no entry. */
export function ruleOf(method: string, pattern: string): { pattern: string; level: Level } | undefined {
  const level = ACCESS[`${method === 'HEAD' ? 'GET' : method} ${pattern}`];
  return level === undefined ? undefined : { pattern, level };
}
