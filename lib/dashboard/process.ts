import { waiters } from '@/lib/broker/waiters';

/** This instance's process: memory, uptime and parked long polls (the bench's soak samples it). */
export function processFacts() {
  const m = process.memoryUsage();
  return {
    pid: process.pid,
    uptimeSeconds: Math.round(process.uptime()),
    rssBytes: m.rss,
    heapUsedBytes: m.heapUsed,
    heapTotalBytes: m.heapTotal,
    externalBytes: m.external,
    parkedPolls: waiters.size,
  };
}
