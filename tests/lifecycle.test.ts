// The storage lifecycle (sql/012): every option that bounds storage takes effect, deletion never
// takes a message inside a live lease or ahead of a group that has not committed it (where the
// option says so), maxSize refuses a push whole, and one instance of two runs the job.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep } from './support/broker';
import { testDatabase } from './support/db';
import { startServer } from './support/server';

const INTERVAL = { RETENTION_INTERVAL_MS: '200' };

describe('storage lifecycle', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp(INTERVAL);
  });
  afterAll(() => app.stop());

  const configure = (queue: string, options: Record<string, unknown>) =>
    app.api.post('/api/v1/configure', { queue, options });
  const stored = async (queue: string) =>
    (
      await app.db.query<{ n: number }>(
        `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = $1`,
        [queue],
      )
    )[0].n;
  const cursor = async (queue: string, group: string) =>
    (
      await app.db.query(
        `select c.committed_offset::int as committed, c.evicted::int as evicted, c.lease_id
      from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
      where q.name = $1 and p.name = 'p' and c.consumer_group = $2`,
        [queue, group],
      )
    )[0];
  /** Waits until `check` holds, or fails with what it last saw. */
  async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 8000): Promise<T> {
    const deadline = Date.now() + ms;
    let v = await read();
    while (!check(v) && Date.now() < deadline) {
      await sleep(100);
      v = await read();
    }
    expect(check(v), JSON.stringify(v)).toBe(true);
    return v;
  }

  it('retentionSeconds deletes messages consumed or not, moves the groups that lagged, and spares a live lease', async () => {
    await configure('lc.retain', { retentionEnabled: true, retentionSeconds: 1, ttl: 0 });
    await pushMany(app.api, 'lc.retain', 'p', 5, 'r');
    const done = await popQueue(app.api, 'lc.retain', { consumerGroup: 'quick', batch: 2 });
    await ackAll(app.api, done);
    const held = await popQueue(app.api, 'lc.retain', { consumerGroup: 'holder', batch: 2, leaseSeconds: 3 });
    expect(held.body.messages).toHaveLength(2);
    await sleep(1500);
    expect(await stored('lc.retain')).toBe(2); // only the live lease's span (offsets 1-2) stays
    await eventually(
      () => stored('lc.retain'),
      (n) => n === 0,
    ); // the lease expired: everything goes
    expect(await cursor('lc.retain', 'quick')).toMatchObject({ committed: 5, evicted: 3 });
    expect(await cursor('lc.retain', 'holder')).toMatchObject({ committed: 5, evicted: 5, lease_id: null });
    const groups = (await app.api.get('/api/v1/consumer-groups')).body.filter((g: any) => g.queueName === 'lc.retain');
    expect(groups.map((g: any) => g.totalLag)).toEqual([0, 0]);
    expect(
      await app.db.query(
        `select 1 from queen.segments s join queen.partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'lc.retain'`,
      ),
    ).toEqual([]);
    const page = (await app.api.get('/api/dashboard/queues/lc.retain')).body;
    expect(page.queue.storage).toMatchObject({ stored: 0, bytes: 0, retentionSeconds: 1 });
  });

  it('a shutdown in the middle of a run does not log it as a failed run', async () => {
    const db = await testDatabase();
    const server = await startServer(db.url, INTERVAL);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      // the next run waits on this lock until the server has stopped under it
      await holder.query('begin; lock table queen.partitions in access exclusive mode');
      await eventually(
        async () =>
          (
            await db.query<{ n: number }>(
              `select count(*)::int as n from pg_stat_activity
               where application_name = 'queen-lifecycle' and wait_event_type = 'Lock'`,
            )
          )[0].n,
        (n) => n === 1,
      );
      await server.stop();
      expect(server.output()).toMatch(/"msg":"stopped"/);
      expect(server.output()).not.toContain('lifecycle run failed');
    } finally {
      await holder.end();
      await server.stop();
      await db.drop();
    }
  });

  it('completedRetentionSeconds deletes only what every group has committed', async () => {
    await configure('lc.done', { completedRetentionSeconds: 1 });
    await pushMany(app.api, 'lc.done', 'p', 4, 'd');
    await ackAll(app.api, await popQueue(app.api, 'lc.done', { consumerGroup: 'fast', batch: 4 }));
    await ackAll(app.api, await popQueue(app.api, 'lc.done', { consumerGroup: 'slow', batch: 1 }));
    await eventually(
      () => stored('lc.done'),
      (n) => n === 3,
    ); // slow committed offset 1 only
    await sleep(700);
    expect(await stored('lc.done')).toBe(3);
    expect(await cursor('lc.done', 'slow')).toMatchObject({ committed: 1, evicted: 0 });
    await ackAll(app.api, await popQueue(app.api, 'lc.done', { consumerGroup: 'slow', batch: 3 }));
    await eventually(
      () => stored('lc.done'),
      (n) => n === 0,
    );
  });

  it('maxWaitTimeSeconds evicts still-pending messages, counted for the groups that missed them', async () => {
    await configure('lc.wait', { maxWaitTimeSeconds: 1, ttl: 0 });
    await pushMany(app.api, 'lc.wait', 'p', 3, 'w');
    await ackAll(app.api, await popQueue(app.api, 'lc.wait', { consumerGroup: 'g', batch: 1 }));
    await eventually(
      () => stored('lc.wait'),
      (n) => n === 0,
    );
    expect(await cursor('lc.wait', 'g')).toMatchObject({ committed: 3, evicted: 2 });
    const [stats] = await app.db.query(
      `select sum(s.evicted)::int as evicted from queen.group_stats s join queen.queues q on q.id = s.queue_id where q.name = 'lc.wait'`,
    );
    expect(stats.evicted).toBe(2);
  });

  it('ttl deletes what every group has consumed, and never what is unconsumed (nor anything of a queue nobody consumes)', async () => {
    await configure('lc.ttl', { ttl: 1 });
    await configure('lc.nobody', { ttl: 1 });
    await pushMany(app.api, 'lc.ttl', 'p', 3, 't');
    await pushMany(app.api, 'lc.nobody', 'p', 3, 'n');
    await ackAll(app.api, await popQueue(app.api, 'lc.ttl', { consumerGroup: 'g', batch: 2 }));
    await eventually(
      () => stored('lc.ttl'),
      (n) => n === 1,
    );
    await sleep(1000);
    expect(await stored('lc.ttl')).toBe(1);
    expect(await stored('lc.nobody')).toBe(3);
  });

  it('maxSize refuses a push whole with the figures, in a push and in a transaction, and takes it once consumers catch up', async () => {
    await configure('lc.full', { maxSize: 5 });
    expect((await app.api.push([1, 2, 3].map((i) => ({ queue: 'lc.full', partition: 'p', payload: i })))).status).toBe(
      201,
    );
    const refused = await app.api.push([4, 5, 6].map((i) => ({ queue: 'lc.full', partition: 'p', payload: i })));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ queue: 'lc.full', maxSize: 5, unconsumed: 3, pushed: 3 });
    expect(refused.body.error).toMatch(/is full: 3 unconsumed messages, maxSize 5/);
    const tx = await app.api.post('/api/v1/transaction', {
      operations: [{ type: 'push', items: [4, 5, 6].map((i) => ({ queue: 'lc.full', partition: 'p', payload: i })) }],
    });
    expect(tx.status).toBe(409);
    expect(await stored('lc.full')).toBe(3);
    await popQueue(app.api, 'lc.full', { consumerGroup: 'g', batch: 3, autoAck: true });
    expect((await app.api.push([4, 5, 6].map((i) => ({ queue: 'lc.full', partition: 'p', payload: i })))).status).toBe(
      201,
    );
  });

  it('removes audit rows and dead letters past their own retention', async () => {
    await app.db.query(
      `insert into queen.audit_log (at, actor, action, target_type, target, result) values (now() - interval '400 days', 'old', 'x', 't', 't', 'ok')`,
    );
    await eventually(
      () => app.db.query(`select 1 from queen.audit_log where actor = 'old'`),
      (rows) => rows.length === 0,
    );
  });

  it('runs on exactly one of two instances, and the other takes over when it stops', async () => {
    const second = await startServer(app.db.url, INTERVAL);
    try {
      const runner = async () =>
        (
          await app.db.query<{ by: string }>(
            `select value->>'by' as by from queen.system_state where key = 'lifecycle'`,
          )
        )[0].by;
      const seen = new Set<string>();
      for (let i = 0; i < 10; i++) {
        seen.add(await runner());
        await sleep(150);
      }
      expect(seen.size).toBe(1);
      const first = [...seen][0];
      const leaders = await app.db.query(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and database = (select oid from pg_database where datname = current_database())`,
        [0x5155_4c46],
      );
      expect(leaders[0].n).toBe(1);
      // stop whichever instance leads: the other takes the job over
      const leaderIsSecond = first.includes(`/${second.process.pid}/`);
      if (leaderIsSecond) await second.stop();
      else await app.server.stop();
      await eventually(runner, (by) => by !== first);
    } finally {
      await second.stop();
    }
  });
});
