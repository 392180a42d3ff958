// Queues: the queue page and a partition's window (dashboard reads), the resource, configuring and
// deleting it, pushing to it.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import { type Answer, seg } from './answer';

/** GET /api/dashboard/queues/:queue with its query string (the live query's path). */
export const queuePagePath = (queue: string, query: URLSearchParams) => `/api/dashboard/queues/${seg(queue)}?${query}`;

/** GET /api/dashboard/queues/:queue/partitions/:partition with its query string (the live query's path). */
export const partitionPagePath = (queue: string, partition: string, query: URLSearchParams | string) =>
  `/api/dashboard/queues/${seg(queue)}/partitions/${seg(partition)}?${query}`;

const queuePath = (queue: string) => `/api/v1/resources/queues/${seg(queue)}`;

export const readQueue = (queue: string, signal?: AbortSignal) =>
  api<Answer<'GET /api/v1/resources/queues/[queue]'>>('GET', queuePath(queue), undefined, signal);

export const configureQueue = (body: {
  queue: string;
  namespace: string;
  task: string;
  options: Record<string, unknown>;
  reason: string;
}) => api<Answer<'POST /api/v1/configure'>>('POST', '/api/v1/configure', body);

export const deleteQueue = (queue: string, reason: string) =>
  api<Answer<'DELETE /api/v1/resources/queues/[queue]'>>('DELETE', withSearch(queuePath(queue), { reason }));

/** POST /api/v1/push's path, for the curl the Try push page shows. */
export const PUSH_PATH = '/api/v1/push';

/**
 * POST /api/v1/push with the body as the operator wrote it: sent as text, never parsed and
 * written again, so its numbers reach the broker byte-exact. The answer as it came, any status.
 */
export async function pushText(body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(PUSH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, text: await res.text() };
}
