import { waiters } from '@/lib/broker/waiters';

/** This instance's process: memory, uptime and parked long polls (the bench's soak samples it). */
export function processFacts() {
  const m = process.memoryUsage();
  const s = waiters.stats;
  const recent = s.servedPerWakeUp;
  return {
    pid: process.pid,
    uptimeSeconds: Math.round(process.uptime()),
    rssBytes: m.rss,
    heapUsedBytes: m.heapUsed,
    heapTotalBytes: m.heapTotal,
    externalBytes: m.external,
    parkedPolls: waiters.size,
    // issue 18: parked polls share their scope's claims
    parkedScopes: waiters.scopeCount,
    parkedByScope: waiters.scopeSizes(20),
    wakeUps: { ...s.wakeUps },
    parkedClaims: s.claims,
    parkedServed: s.served,
    claimsPerWakeUp: recent.length ? Number((recent.reduce((a, b) => a + b, 0) / recent.length).toFixed(2)) : 0,
    rechecks: s.rechecks,
    recheckedScopes: s.recheckedScopes,
  };
}
