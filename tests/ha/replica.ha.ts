// The dashboard reading from a streaming replica (issue 33, item 4): a real PostgreSQL 15 primary
// and hot standby, the app with DATABASE_URL = the primary and DATABASE_READ_URL = the standby.
// With the standby's replay paused, the pages and /metrics show the past and say how far behind
// they are, while pushes, pops, acks and operator actions go on against the primary; once replay
// resumes, they catch up. An instance without DATABASE_READ_URL reads the primary, as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ackAll, pop, popQueue, pushMany } from '../support/broker';
import { client } from '../support/http';
import { startServer, type TestServer } from '../support/server';
import { report, until } from '../faults/support';
import { startReplicaPair, type ReplicaPair } from './support/replica';

type Api = ReturnType<typeof client>;

const QUEUE = 'replica.orders';

describe('the dashboard reads from a streaming replica', () => {
  let pair: ReplicaPair;
  let withReplica: TestServer;
  let plain: TestServer;
  let a: Api, b: Api;

  const messagesShown = async (api: Api) =>
    ((await api.get('/api/dashboard/overview')).body.queues as { name: string; messages: number }[]).find(
      (q) => q.name === QUEUE,
    )?.messages;
  const pushedInMetrics = async (api: Api) =>
    ((await api.get('/metrics')).body.queues as { queue: string; pushed: number }[]).find((q) => q.queue === QUEUE)
      ?.pushed;
  const source = async (api: Api) => {
    const r = await api.get('/api/dashboard/replica');
    expect(r.status).toBe(200);
    return r.body;
  };
  const replayed = async () => {
    // pg_wal_replay_pause() only asks: replay stops at the next record boundary
    const [{ state }] = await pair.standby<{ state: string }>('select pg_get_wal_replay_pause_state() as state');
    return state;
  };

  beforeAll(async () => {
    pair = await startReplicaPair();
    // the instance with a replica boots first and migrates the primary; the standby replays the schema
    withReplica = await startServer(pair.primaryUrl, { DATABASE_READ_URL: pair.standbyUrl, DB_POOL_SIZE: '5' });
    plain = await startServer(pair.primaryUrl, { DB_POOL_SIZE: '5' });
    [a, b] = [client(withReplica.url), client(plain.url)];
    await pushMany(a, QUEUE, 'p', 5, 'before');
    await until(async () => (await messagesShown(a)) === 5, 20_000);
  });
  afterAll(async () => {
    await pair?.standby('select pg_wal_replay_resume()').catch(() => {});
    await Promise.all([withReplica?.stop(), plain?.stop()]);
    await pair?.stop();
  });

  it("sends the dashboard's reads to the standby and nothing else", async () => {
    const s = await source(a);
    expect(s).toMatchObject({ reads: 'replica', standby: true, replayPaused: false });
    const readers = (db: 'primary' | 'standby') =>
      pair[db]<{ app: string }>(
        `select application_name as app from pg_stat_activity where application_name like 'queen-%' order by 1`,
      );
    const onStandby = (await readers('standby')).map((r) => r.app);
    expect(onStandby).toContain(`queen-pg-read/${withReplica.process.pid}`);
    expect(onStandby.every((app) => app.startsWith('queen-pg-read/'))).toBe(true);
    const onPrimary = (await readers('primary')).map((r) => r.app);
    expect(onPrimary.some((app) => app.startsWith('queen-pg-read/'))).toBe(false);
    expect(onPrimary).toContain(`queen-pg/${withReplica.process.pid}`);
  });

  it('answers every read it moved from the standby: no statement among them writes or needs the primary', async () => {
    const pop = await popQueue(a, QUEUE, { consumerGroup: 'billing', batch: 2, leaseSeconds: 60 });
    expect(pop.status).toBe(200);
    const { partitionId, transactionId } = pop.body.messages[0];
    // the lease the pop took, on the standby too, so that the reads below find it
    await until(async () => (await source(a)).lagBytes === 0, 20_000);
    const since = new Date(Date.now() - 60_000).toISOString();
    const paths = [
      '/api/dashboard/overview',
      '/api/dashboard/groups',
      '/api/dashboard/groups?group=billing',
      `/api/dashboard/queues/${QUEUE}`,
      `/api/dashboard/queues/${QUEUE}/partitions/p`,
      `/api/dashboard/activity?since=${encodeURIComponent(since)}&partitions=${encodeURIComponent(JSON.stringify([[QUEUE, 'p']]))}`,
      '/api/dashboard/recent-claims',
      '/api/dashboard/streams',
      '/api/dashboard/dead-letter-errors',
      '/api/v1/consumers',
      `/api/v1/stats?queue=${QUEUE}&minutes=60`,
      `/api/v1/search?q=${QUEUE}`,
      `/api/v1/search?q=${transactionId}`,
      `/api/v1/search?q=${partitionId}`,
      `/api/v1/search?q=${pop.body.leaseId}`,
      '/metrics',
      '/metrics/prometheus',
      '/',
      '/groups',
      '/consumers',
      '/streams',
      '/dead-letters/errors',
      `/queues/${QUEUE}`,
      `/queues/${QUEUE}/partitions/p`,
    ];
    // one at a time: what is checked is where each statement runs, not how many the pool serves at once
    const failed: string[] = [];
    for (const p of paths) {
      const r = await a.get(p);
      if (r.status !== 200) failed.push(`${p}: ${r.status} ${r.text.slice(0, 300)}`);
    }
    expect(failed).toEqual([]);
    expect((await a.get('/metrics')).body.figuresUp).toBe(true);
    expect(withReplica.output()).not.toMatch(/read-only transaction|recovery is in progress|hot standby/i);
    await ackAll(a, pop);
  });

  it('shows the past while replay is paused, with a lag that grows, then catches up when it resumes', async () => {
    // replaying: the lag the dashboard shows right after each of 20 pushes (recorded, not asserted)
    const running: { lagBytes: number; lagSeconds: number }[] = [];
    for (let i = 0; i < 20; i++) {
      await pushMany(a, 'replica.load', 'p', 10, 'load', i * 10);
      running.push(await source(a));
    }
    await until(async () => (await source(a)).lagBytes === 0, 20_000);
    const before = await messagesShown(a);
    await pair.standby('select pg_wal_replay_pause()');
    await until(async () => (await replayed()) === 'paused', 10_000);
    const pushedAt = Date.now();
    await pushMany(a, QUEUE, 'p', 3, 'while-paused');

    // the primary has them: the instance without a replica sees them at once
    expect(await messagesShown(b)).toBe(before! + 3);
    // the replica does not, and says so
    expect(await messagesShown(a)).toBe(before);
    expect(await pushedInMetrics(a)).toBe(before);
    const first = await source(a);
    expect(first).toMatchObject({ reads: 'replica', standby: true, replayPaused: true });
    expect(first.lagBytes).toBeGreaterThan(0);
    expect(first.lagSeconds).toBeGreaterThan(0);
    let later = first;
    await until(async () => {
      later = await source(a);
      return later.lagSeconds > first.lagSeconds;
    }, 10_000);
    const shownAt = Date.now();
    const prometheus = (await a.get('/metrics/prometheus')).text;
    expect(Number(/^queen_replica_lag_bytes (\S+)$/m.exec(prometheus)?.[1])).toBeGreaterThan(0);
    expect(Number(/^queen_replica_lag_seconds (\S+)$/m.exec(prometheus)?.[1])).toBeGreaterThan(0);
    expect((await a.get('/metrics')).body.replica).toMatchObject({ reads: 'replica', replayPaused: true });
    const [{ age }] = await pair.standby<{ age: number }>(
      'select extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as age',
    );

    await pair.standby('select pg_wal_replay_resume()');
    const caughtUpMs = await until(async () => (await messagesShown(a)) === before! + 3, 20_000);
    await until(async () => (await source(a)).lagBytes === 0, 20_000);
    expect(await source(a)).toMatchObject({ lagBytes: 0, lagSeconds: 0, replayPaused: false });
    report('replica, lag shown while replay was paused', {
      'first reading': `${first.lagSeconds.toFixed(2)} s, ${first.lagBytes} bytes`,
      'later reading': `${later.lagSeconds.toFixed(2)} s, ${later.lagBytes} bytes`,
      'the standby then said its last replayed commit was': `${age.toFixed(2)} s old`,
      'the reads missed the pushes made': `${((shownAt - pushedAt) / 1000).toFixed(2)} s before the later reading`,
      'overview showed them after resume in': `${caughtUpMs} ms`,
    });
    const bytes = running.map((r) => r.lagBytes);
    report('replica, lag shown right after each of 20 pushes while replaying', {
      'readings at 0 (caught up)': `${bytes.filter((b) => b === 0).length} of 20`,
      'largest lag shown': `${Math.max(...bytes)} bytes, ${Math.max(...running.map((r) => r.lagSeconds ?? 0)).toFixed(3)} s`,
    });
  });

  it('sends pushes, pops, acks and operator actions to the primary while the replica is stopped', async () => {
    await pair.standby('select pg_wal_replay_pause()');
    await until(async () => (await replayed()) === 'paused', 10_000);
    try {
      await pushMany(a, QUEUE, 'q', 4, 'paused-again');
      const claimed = await pop(a, `/queue/${QUEUE}/partition/q`, {
        consumerGroup: 'ops',
        batch: 10,
        leaseSeconds: 60,
      });
      expect(claimed.status).toBe(200);
      expect(claimed.body.messages.map((m: any) => m.transactionId)).toEqual(
        [0, 1, 2, 3].map((i) => `paused-again-${i}`),
      );
      expect((await ackAll(a, claimed)).every((r: any) => r.success)).toBe(true);

      // an operator action, and the state its control shows, on the primary at once
      const on = await a.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'replica test' });
      expect(on.status).toBe(200);
      expect((await a.get('/api/dashboard/maintenance')).body.maintenance).toMatchObject({
        enabled: true,
        reason: 'replica test',
      });
      expect((await a.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'done' })).status).toBe(200);
      const configured = await a.post('/api/v1/configure', { queue: QUEUE, options: { leaseTime: 90 } });
      expect(configured.status).toBe(200);
      const [{ lease_time }] = await pair.primary<{ lease_time: number }>(
        `select lease_time from queen.queues where name = '${QUEUE}'`,
      );
      expect(lease_time).toBe(90);
      const [{ on_standby }] = await pair.standby<{ on_standby: number }>(
        `select lease_time as on_standby from queen.queues where name = '${QUEUE}'`,
      );
      expect(on_standby).not.toBe(90);
      // the System page describes the primary: a standby's table statistics are its own (none here)
      await until(async () => {
        const { tables } = (await a.get('/api/dashboard/system')).body.autovacuum;
        return tables.some((t: { liveRows: number }) => t.liveRows > 0);
      }, 10_000);
    } finally {
      await pair.standby('select pg_wal_replay_resume()');
    }
  });

  it('reads the primary without DATABASE_READ_URL, as before', async () => {
    expect(await source(b)).toEqual({ reads: 'primary' });
    expect((await b.get('/metrics')).body.replica).toEqual({ reads: 'primary' });
    expect((await b.get('/metrics/prometheus')).text).not.toContain('queen_replica_lag');
    await pair.standby('select pg_wal_replay_pause()');
    await until(async () => (await replayed()) === 'paused', 10_000);
    try {
      const shown = await messagesShown(b);
      await pushMany(b, QUEUE, 'r', 2, 'plain');
      expect(await messagesShown(b)).toBe(shown! + 2);
      expect(await pushedInMetrics(b)).toBe(shown! + 2);
      const onStandby = await pair.standby<{ app: string }>(
        `select application_name as app from pg_stat_activity where application_name like 'queen-%/${plain.process.pid}'`,
      );
      expect(onStandby).toEqual([]);
    } finally {
      await pair.standby('select pg_wal_replay_resume()');
    }
  });
});
