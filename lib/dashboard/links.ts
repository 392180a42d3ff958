/** Where the dashboard lists what an Overview figure of queue `name` counts. */
export const overviewLinks = (name: string) => {
  const queue = encodeURIComponent(name);
  return {
    queue: `/queues/${queue}`,
    attention: `/queues/${queue}?sort=attention`,
    oldestPending: `/queues/${queue}?sort=lag`,
    leases: (state: 'live' | 'expired' | 'held-long' | 'redelivered' | 'stuck') => `/leases?queue=${queue}&state=${state}`,
    deadLetters: `/dead-letters?queue=${queue}`,
  };
};

/** A partition's messages by offset; `query` adds the group to centre on and the window. */
export const partitionHref = (queue: string, partition: string, query: Record<string, string | null | undefined> = {}) => {
  const qs = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])));
  return `/queues/${encodeURIComponent(queue)}/partitions/${encodeURIComponent(partition)}${qs.size ? `?${qs}` : ''}`;
};
