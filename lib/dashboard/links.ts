import { withSearch } from './search';

/** The Message page of one message. */
export const messageHref = (partitionId: string, transactionId: string) => `/messages/${partitionId}/${encodeURIComponent(transactionId)}`;

/** The Dead letters page, filtered (every filter optional). */
export const deadLettersHref = (filters: { queue?: string; partition?: string; group?: string }) => withSearch('/dead-letters', filters);

/** The message at an offset of a partition (a lease's span, a live event): redirects to its Message page. */
export const messageAtHref = (partitionId: string, offset: number) => `/messages/${partitionId}/at/${offset}`;

/** Where the dashboard lists what an Overview figure of queue `name` counts. */
export const overviewLinks = (name: string) => {
  const queue = encodeURIComponent(name);
  return {
    queue: `/queues/${queue}`,
    attention: `/queues/${queue}?sort=attention`,
    oldestPending: `/queues/${queue}?sort=lag`,
    leases: (state: 'live' | 'expired' | 'held-long' | 'redelivered' | 'stuck') => `/leases?queue=${queue}&state=${state}`,
    deadLetters: deadLettersHref({ queue: name }),
  };
};

/** A partition's messages by offset; `query` adds the group to centre on and the window. */
export const partitionHref = (queue: string, partition: string, query: Record<string, string | null | undefined> = {}) => {
  const qs = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])));
  return `/queues/${encodeURIComponent(queue)}/partitions/${encodeURIComponent(partition)}${qs.size ? `?${qs}` : ''}`;
};
