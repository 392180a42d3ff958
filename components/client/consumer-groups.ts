// A consumer group on a queue: seek (and its preview) and deleting its cursors there.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import { type Answer, seg } from './answer';

const onQueue = (group: string, queue: string) => `/api/v1/consumer-groups/${seg(group)}/queues/${seg(queue)}`;

export type SeekPreview = Answer<'GET /api/v1/consumer-groups/[group]/queues/[queue]/seek/preview'>;

/** What a seek would do; `query` holds its target (toEnd or timestamp), partition, after. */
export const seekPreview = (group: string, queue: string, query: string, signal?: AbortSignal) =>
  api<SeekPreview>('GET', `${onQueue(group, queue)}/seek/preview?${query}`, undefined, signal);

export const seek = (
  group: string,
  queue: string,
  partition: string,
  body: { toEnd?: boolean; timestamp?: string | null; reason: string },
) =>
  partition
    ? api<Answer<'POST /api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek'>>(
        'POST',
        `${onQueue(group, queue)}/partitions/${seg(partition)}/seek`,
        body,
      )
    : api<Answer<'POST /api/v1/consumer-groups/[group]/queues/[queue]/seek'>>(
        'POST',
        `${onQueue(group, queue)}/seek`,
        body,
      );

export const deleteGroupOnQueue = (group: string, queue: string, reason: string) =>
  api<Answer<'DELETE /api/v1/consumer-groups/[group]/queues/[queue]'>>(
    'DELETE',
    `${onQueue(group, queue)}?reason=${seg(reason)}`,
  );

/** GET /api/dashboard/groups (the live query's path). */
export const groupsPath = (filters: Record<string, string | undefined>) => withSearch('/api/dashboard/groups', filters);

/** GET /api/v1/consumers (the live query's path). */
export const consumersPath = (page: number, pageSize: number) =>
  withSearch('/api/v1/consumers', { page: String(page), pageSize: String(pageSize) });
