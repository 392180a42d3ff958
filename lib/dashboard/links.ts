import { withSearch } from './query-string';

/** The Message page of one message. */
export const messageHref = (partitionId: string, transactionId: string) =>
  `/messages/${partitionId}/${encodeURIComponent(transactionId)}`;

/** The Audit page, filtered: `target` a part of the target; queue, partition id and group the objects an entry names. */
export const auditHref = (filters: { target?: string; queue?: string; partitionId?: string; group?: string }) =>
  withSearch('/audit', filters);

/** The Dead letters page, filtered (every filter optional). */
export const deadLettersHref = (filters: { queue?: string; partition?: string; group?: string }) =>
  withSearch('/dead-letters', filters);

/** The message at an offset of a partition (a lease's span, a live event): redirects to its Message page. */
export const messageAtHref = (partitionId: string, offset: number) => `/messages/${partitionId}/at/${offset}`;

/**
 * The queue page; `partition` keeps that one partition (`partitionIs`, exact: the page's own
 * `partition` text box matches substrings, so p-1 would also list p-10).
 */
export const queueHref = (
  queue: string,
  filters: { partition?: string; group?: string; sort?: 'attention' | 'lag' } = {},
) =>
  withSearch(`/queues/${encodeURIComponent(queue)}`, {
    partitionIs: filters.partition,
    group: filters.group,
    sort: filters.sort,
  });

/** The Leases page; `holder` keeps that one holder's leases (`holderIs`, exact, not the text box's substring). */
export const leasesHref = (filters: { lease?: string; queue?: string; holder?: string; state?: string }) =>
  withSearch('/leases', { lease: filters.lease, queue: filters.queue, holderIs: filters.holder, state: filters.state });

/** Where the dashboard lists what an Overview figure of queue `name` counts. */
export const overviewLinks = (name: string) => ({
  queue: queueHref(name),
  attention: queueHref(name, { sort: 'attention' }),
  oldestPending: queueHref(name, { sort: 'lag' }),
  leases: (state: 'live' | 'expired' | 'held-long' | 'redelivered' | 'stuck') => leasesHref({ queue: name, state }),
  deadLetters: deadLettersHref({ queue: name }),
});

/** A partition's messages by offset; `query` adds the group to centre on and the window. */
export const partitionHref = (
  queue: string,
  partition: string,
  query: Record<string, string | null | undefined> = {},
) => {
  const qs = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])));
  return `/queues/${encodeURIComponent(queue)}/partitions/${encodeURIComponent(partition)}${qs.size ? `?${qs}` : ''}`;
};

/** The consumer groups page; `group` keeps that one group (exact). */
export const groupsHref = (filters: { group?: string; minutes?: number } = {}) =>
  withSearch('/groups', {
    group: filters.group,
    minutes: filters.minutes === undefined ? undefined : String(filters.minutes),
  });
