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
