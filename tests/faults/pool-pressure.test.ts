// Fault: 300 long polls parked on a pool of 5 connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app';
import { report } from './support';

describe('faults: 300 long polls on a pool of 5', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ DB_POOL_SIZE: '5' });
  });
  afterAll(() => app.stop());

  it('every poll gets its message, autoAck never twice, and the pool stays at 5', async () => {
    const polls = Array.from({ length: 300 }, () =>
      fetch(
        `${app.server.url}/api/v1/pop/queue/faults.pool?consumerGroup=g&batch=1&autoAck=true&wait=true&timeout=30000`,
      ).then(async (r) => (r.status === 200 ? (await r.json()).messages[0].transactionId : `status ${r.status}`)),
    );
    let peak = 0;
    const sampling = setInterval(async () => {
      const [r] = await app.db.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'queen-pg/%'`,
      );
      peak = Math.max(peak, r.n);
    }, 50);
    await new Promise((r) => setTimeout(r, 1500));
    const started = Date.now();
    const items = Array.from({ length: 300 }, (_, i) => ({
      queue: 'faults.pool',
      partition: `p${i}`,
      payload: i,
      transactionId: `pool-${i}`,
    }));
    expect((await app.api.push(items)).status).toBe(201);
    const got = await Promise.all(polls);
    clearInterval(sampling);
    expect(got.filter((g) => g.startsWith('status'))).toEqual([]);
    expect(new Set(got).size).toBe(300);
    expect(peak).toBeLessThanOrEqual(5);
    report('pool pressure', {
      'parked polls': 300,
      pool: 5,
      'peak pool connections': peak,
      'all answered after the push in': `${Date.now() - started} ms`,
    });
  }, 90_000);
});
