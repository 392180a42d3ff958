// Long polling (pop-routes.md): parked pops hold no connection, wake on pushes (on this instance
// or another), time out with 204, and stop when the client goes away.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { pop, popQueue, pushMany, sleep } from './support/broker';
import { client } from './support/http';
import { startServer, type TestServer } from './support/server';

// Re-checks every 120 s, longer than any poll's timeout here: a 200 can only come from a wake-up,
// so no test measures how fast it came.
const SLOW_POLL = { POP_WAIT_INITIAL_INTERVAL_MS: '120000', POP_WAIT_MAX_INTERVAL_MS: '120000' };

describe('long polling', () => {
  let app: TestApp;
  let second: TestServer;
  beforeAll(async () => {
    app = await startApp({ ...SLOW_POLL, DB_POOL_SIZE: '5' });
    second = await startServer(app.db.url, SLOW_POLL);
  });
  afterAll(async () => {
    await second.stop();
    await app.stop();
  });

  it('a push wakes a parked pop at once (latency reported)', async () => {
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const parked = popQueue(app.api, 'lp.wake', { wait: true, timeout: 20000, autoAck: true });
      await sleep(300);
      const pushedAt = performance.now();
      await app.api.push([{ queue: 'lp.wake', payload: i }]);
      const r = await parked;
      latencies.push(performance.now() - pushedAt);
      expect(r.status).toBe(200);
      expect(r.body.messages[0].data).toBe(i);
    }
    console.log(
      `[long-poll] push → parked pop answered (same instance, includes the push round trip): ${latencies.map((l) => l.toFixed(1)).join(', ')} ms`,
    );
  });

  it('a push on one instance wakes a pop parked on another instance sharing the database', async () => {
    const other = client(second.url);
    const latencies: number[] = [];
    for (let i = 0; i < 3; i++) {
      const parked = popQueue(other, 'lp.cross', { wait: true, timeout: 20000, autoAck: true });
      await sleep(300);
      const pushedAt = performance.now();
      await app.api.push([{ queue: 'lp.cross', payload: i }]);
      const r = await parked;
      latencies.push(performance.now() - pushedAt);
      expect(r.status).toBe(200);
    }
    console.log(
      `[long-poll] push on instance A → pop parked on instance B answered: ${latencies.map((l) => l.toFixed(1)).join(', ')} ms`,
    );
  });

  it('the listener reconnects by itself and then wakes every waiter, since notifications were lost meanwhile', async () => {
    const other = client(second.url);
    const parked = popQueue(other, 'lp.reconnect', { wait: true, timeout: 30000, autoAck: true });
    await sleep(300);
    const admin = new pg.Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
    await admin.connect();
    const inside = new pg.Client({ connectionString: app.db.url }); // connected before the door closes
    await inside.connect();
    await admin.query(`alter database "${app.db.name}" with allow_connections false`);
    try {
      await inside.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'queen-listener'",
      );
      await sleep(300);
      // Pushed while the second instance cannot hear it (queen.push notifies; nobody there listens).
      await inside.query(
        `select * from queen.push('[{"queue":"lp.reconnect","partition":"Default","payload":"missed","transactionId":"t1","messageId":"01a2291d-98d7-78cc-b1bd-7f3819ba7725"}]'::jsonb)`,
      );
    } finally {
      await admin.query(`alter database "${app.db.name}" with allow_connections true`);
      await admin.end();
      await inside.end();
    }
    const r = await parked;
    expect(r.status).toBe(200); // the re-check interval (120 s) is past the poll's timeout
    expect(r.body.messages[0].data).toBe('missed');
  });

  it('a discovery pop wakes on any push within its namespace/task scope', async () => {
    await app.api.post('/api/v1/configure', { queue: 'lp.disc.target', namespace: 'lpdisc', task: 'work' });
    const parked = pop(app.api, '', { namespace: 'lpdisc', wait: true, timeout: 20000, autoAck: true });
    await sleep(300);
    await app.api.push([{ queue: 'lp.disc.target', payload: 'found' }]);
    const r = await parked;
    expect(r.status).toBe(200);
    expect(r.body.messages[0].data).toBe('found');
  });

  it('a long poll that times out returns 204, not an error', async () => {
    const started = Date.now();
    const r = await popQueue(app.api, 'lp.timeout', { wait: true, timeout: 700 });
    const took = Date.now() - started;
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(took).toBeGreaterThanOrEqual(650); // a timer never fires early: a lower bound no load can break
  });

  it('200 parked pops on a pool of 5 connections: pushes and pops still complete, and every parked pop gets its message', async () => {
    const parked = Array.from({ length: 200 }, () =>
      popQueue(app.api, 'lp.many', { wait: true, timeout: 60000, autoAck: true, batch: 1 }),
    );
    await sleep(1500);
    const [{ n }] = await app.db.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1',
      [`queen-pg/${app.server.process.pid}`],
    );
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThanOrEqual(5);

    // Meanwhile the broker serves everyone else.
    await pushMany(app.api, 'lp.other', 'p', 3);
    const other = await popQueue(app.api, 'lp.other', { batch: 3 });
    expect(other.status).toBe(200);
    expect(other.body.messages).toHaveLength(3);

    const items = Array.from({ length: 200 }, (_, i) => ({ queue: 'lp.many', partition: `p${i % 10}`, payload: i }));
    expect((await app.api.push(items)).status).toBe(201);
    const replies = await Promise.all(parked);
    expect(replies.map((r) => r.status).every((s) => s === 200)).toBe(true);
    const got = replies.flatMap((r) => r.body.messages.map((m: any) => m.data)).sort((a, b) => a - b);
    expect(got).toEqual([...Array(200).keys()]);
  }, 120_000);

  it('a client that disconnects stops waiting (its pop claims nothing afterwards)', async () => {
    const controller = new AbortController();
    const parked = popQueue(
      app.api,
      'lp.gone',
      { wait: true, timeout: 30000, autoAck: true },
      { signal: controller.signal },
    ).catch(() => 'aborted');
    await sleep(300);
    controller.abort();
    expect(await parked).toBe('aborted');
    await sleep(2500); // the server notices the disconnect about a second later
    await app.api.push([{ queue: 'lp.gone', payload: 'still here' }]);
    await sleep(300);
    const r = await popQueue(app.api, 'lp.gone', { autoAck: true });
    expect(r.status).toBe(200);
    expect(r.body.messages[0].data).toBe('still here');
  });

  it('an ack that releases a lease wakes the pops parked behind it', async () => {
    await pushMany(app.api, 'lp.release', 'p', 2);
    const holder = await popQueue(app.api, 'lp.release', { batch: 1 });
    const parked = popQueue(app.api, 'lp.release', { wait: true, timeout: 20000 });
    await sleep(300);
    await app.api.post('/api/v1/ack', {
      transactionId: holder.body.messages[0].transactionId,
      partitionId: holder.body.partitionId,
      leaseId: holder.body.leaseId,
    });
    const r = await parked;
    expect(r.status).toBe(200);
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([1]);
  });
});

describe('the long-poll timeout default', () => {
  const timed = async (env: Record<string, string>) => {
    const app = await startApp(env);
    try {
      const started = Date.now();
      const r = await popQueue(app.api, 'lp.default', { wait: true });
      expect(r.status).toBe(204);
      return Date.now() - started;
    } finally {
      await app.stop();
    }
  };

  it('comes from POP_DEFAULT_TIMEOUT_MS when DEFAULT_TIMEOUT is unset', async () => {
    const took = await timed({ POP_DEFAULT_TIMEOUT_MS: '800' });
    expect(took).toBeGreaterThanOrEqual(750);
  }, 20_000); // the other default (30 s) would outlast the test

  it('comes from DEFAULT_TIMEOUT, which wins when both are set', async () => {
    const took = await timed({ DEFAULT_TIMEOUT: '600', POP_DEFAULT_TIMEOUT_MS: '30000' });
    expect(took).toBeGreaterThanOrEqual(550);
  }, 20_000); // POP_DEFAULT_TIMEOUT_MS's 30 s would outlast the test
});
