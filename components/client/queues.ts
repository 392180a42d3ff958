// Queues: the queue page and a partition's window (dashboard reads), the resource, deleting it.
import { api } from '../api';
import { type Answer, seg } from './answer';

/** GET /api/dashboard/queues/:queue with its query string (the live query's path). */
export const queuePagePath = (queue: string, query: URLSearchParams) => `/api/dashboard/queues/${seg(queue)}?${query}`;

/** GET /api/dashboard/queues/:queue/partitions/:partition with its query string (the live query's path). */
export const partitionPagePath = (queue: string, partition: string, query: URLSearchParams | string) =>
  `/api/dashboard/queues/${seg(queue)}/partitions/${seg(partition)}?${query}`;

export const readQueue = (queue: string) =>
  api<Answer<'GET /api/v1/resources/queues/[queue]'>>('GET', `/api/v1/resources/queues/${seg(queue)}`);
