// The console's pop: the three pop routes, the dry run, what a pop would create, the batch ack.
import { api } from '../api';
import { type Answer, seg } from './answer';

export type PopRoute = 'queue' | 'partition' | 'discovery';

/** The pop route's path (its query string is the caller's). */
export const popRoutePath = (route: PopRoute | string, queue: string, partition: string) =>
  route === 'discovery'
    ? '/api/v1/pop'
    : route === 'partition'
      ? `/api/v1/pop/queue/${seg(queue)}/partition/${seg(partition)}`
      : `/api/v1/pop/queue/${seg(queue)}`;

/** GET /api/dashboard/pop-preview: the dry run of a pop with these parameters. */
export const popPreviewPath = (query: URLSearchParams) => `/api/dashboard/pop-preview?${query}`;

export type PopTarget = Answer<'GET /api/dashboard/pop-target'>;

/** What a pop would create (the queue, the group's cursors) before claiming anything. */
export const popTarget = (queue: string, consumerGroup: string) =>
  api<PopTarget>(
    'GET',
    `/api/dashboard/pop-target?${new URLSearchParams({ queue, ...(consumerGroup ? { consumerGroup } : {}) })}`,
  );

export const ackBatch = (body: {
  consumerGroup: string;
  acknowledgments: {
    transactionId: string;
    partitionId: string;
    leaseId: string | null;
    status: 'completed' | 'failed';
    error: string | null;
  }[];
}) => api<Answer<'POST /api/v1/ack/batch'>>('POST', '/api/v1/ack/batch', body);
