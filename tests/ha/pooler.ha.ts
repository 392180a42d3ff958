// The broker through PgBouncer in transaction mode (issue 33, item 2): the pool goes through the
// pooler (DATABASE_URL), what needs a session (LISTEN, the lifecycle job's advisory lock,
// migrations' lock) straight to PostgreSQL (DATABASE_DIRECT_URL). Two instances, a pooler that
// gives them 4 server connections for their pools of 10 each, and the API flows that cross them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/db';
import { ackAll, pop, popQueue, pushMany } from '../support/broker';
import { client } from '../support/http';
import { startServer, type TestServer } from '../support/server';
import { report, until } from '../faults/support';
import { startPgBouncer, type PgBouncer } from './support/pgbouncer';

const RECHECK_MS = 30_000; // a parked pop re-checks on its own only after this: an earlier answer is a NOTIFY's
const POLL_TIMEOUT_MS = 10_000;
const SERVER_CONNECTIONS = 4;

type Api = ReturnType<typeof client>;

describe('through PgBouncer in transaction mode', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  const servers: TestServer[] = [];
  let a: Api, b: Api;

  beforeAll(async () => {
    // not migrated: the first instance migrates, over the direct URL
    db = await testDatabase({ migrated: false });
    const server = new URL(db.url);
    bouncer = await startPgBouncer(
      { host: server.hostname, port: Number(server.port || 5432) },
      { poolSize: SERVER_CONNECTIONS },
    );
    const env = {
      DATABASE_DIRECT_URL: db.url,
      DB_POOL_SIZE: '10',
      RETENTION_INTERVAL_MS: '1000',
      POP_WAIT_INITIAL_INTERVAL_MS: String(RECHECK_MS),
      POP_WAIT_MAX_INTERVAL_MS: String(RECHECK_MS),
    };
    // one after the other: the second's migration takes and releases the same session lock
    servers.push(await startServer(bouncer.url(db.url), env));
    servers.push(await startServer(bouncer.url(db.url), env));
    [a, b] = servers.map((s) => client(s.url));
    for (const api of [a, b])
      await until(async () => (await api.get('/metrics')).body.listener.connected === true, 10_000);
    await until(
      async () => (await db.query<{ n: number }>('select count(*)::int as n from queen.instances'))[0].n === 2,
      10_000,
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await bouncer?.stop();
    await db?.drop();
  });

  it("sends the pool's connections through the pooler and the session users straight to PostgreSQL", async () => {
    const clients = (await bouncer.show<{ database: string; application_name: string }>('clients')).filter(
      (c) => c.database === db.name,
    );
    const names = new Set(clients.map((c) => c.application_name));
    for (const s of servers) expect(names).toContain(`queen-pg/${s.process.pid}`);
    for (const name of names) expect(name).toMatch(/^queen-pg\/\d+$/);
    const direct = await db.query<{ application_name: string; n: number }>(
      `select application_name, count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name in ('queen-listener', 'queen-lifecycle')
        group by 1 order by 1`,
    );
    expect(direct).toEqual([
      { application_name: 'queen-lifecycle', n: 1 },
      { application_name: 'queen-listener', n: 2 },
    ]);
    for (const s of servers) expect(s.output()).not.toContain('unsupported startup parameter');
  });

  it('pushes, pops, acks and runs a transaction across both instances', async () => {
    await pushMany(a, 'pooled.flow', 'p', 20);
    const first = await popQueue(b, 'pooled.flow', { consumerGroup: 'g', batch: 10, leaseSeconds: 30 });
    expect(first.status).toBe(200);
    expect(first.body.messages.map((m: any) => m.data.seq)).toEqual([...Array(10).keys()]);
    expect((await ackAll(a, first)).every((r: any) => r.success)).toBe(true);
    const second = await popQueue(a, 'pooled.flow', { consumerGroup: 'g', batch: 10, leaseSeconds: 30 });
    const tx = await b.post('/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'pooled.next', partition: 'p', payload: { step: 2 }, transactionId: 'n-0' }] },
        ...second.body.messages.map((m: any) => ({
          type: 'ack',
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          consumerGroup: 'g',
          status: 'completed',
        })),
      ],
    });
    expect(tx.status).toBe(200);
    expect(tx.body.success).toBe(true);
    const [cursor] = await db.query<{ committed: string; lease: string | null }>(
      `select c.committed_offset::text as committed, c.lease_id as lease from queen.cursors c
         join queen.queues q on q.id = c.queue_id where q.name = 'pooled.flow' and c.consumer_group = 'g'`,
    );
    expect(cursor).toEqual({ committed: '20', lease: null });
    const next = await popQueue(a, 'pooled.next', { consumerGroup: 'g', autoAck: true });
    expect(next.body.messages.map((m: any) => m.data)).toEqual([{ step: 2 }]);
  });

  it('wakes a long poll parked on A with a push through B (NOTIFY reaches the direct LISTEN connection)', async () => {
    const started = Date.now();
    const parked = popQueue(a, 'pooled.wake', { consumerGroup: 'g', wait: true, timeout: POLL_TIMEOUT_MS });
    await until(async () => (await a.get('/metrics')).body.parkedPops >= 1, 5_000);
    const pushedAt = Date.now();
    await pushMany(b, 'pooled.wake', 'p', 1);
    const reply = await parked;
    expect(reply.status).toBe(200);
    expect(reply.body.messages[0].data).toEqual({ seq: 0 });
    report('pooler, wake-up across instances', {
      'answered after the push': `${Date.now() - pushedAt} ms`,
      'poll parked for': `${pushedAt - started} ms`,
      're-check interval': `${RECHECK_MS} ms`,
    });
  });

  it(`serves 200 concurrent requests from pools of 10 + 10 over ${SERVER_CONNECTIONS} server connections`, async () => {
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const api = i % 2 ? a : b;
        return i % 4 < 2
          ? api.push([{ queue: 'pooled.many', partition: `p${i % 8}`, payload: { i }, transactionId: `m-${i}` }])
          : pop(api, '/queue/pooled.many', { consumerGroup: 'g', autoAck: true, batch: 5 });
      }),
    );
    const counts: Record<number, number> = {};
    for (const r of statuses) counts[r.status] = (counts[r.status] ?? 0) + 1;
    expect(Object.keys(counts).every((s) => ['200', '201', '204'].includes(s))).toBe(true);
    expect(counts[201]).toBe(100);
    const pools = (await bouncer.show<Record<string, string | number>>('pools')).filter((p) => p.database === db.name);
    const servers_ = pools.reduce((n, p) => n + Number(p.sv_active) + Number(p.sv_idle) + Number(p.sv_used), 0);
    expect(servers_).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    report('pooler, 200 concurrent requests', { answers: JSON.stringify(counts), 'server connections': servers_ });
  });

  it('warns at boot that statements through the pooler have no statement_timeout unless the database gives one', () => {
    for (const s of servers)
      expect(s.output()).toContain('statements through the pooler (DATABASE_URL) have no statement_timeout');
  });

  it('runs the lifecycle job on one instance, whose direct session holds the lock; the other takes over when it stops', async () => {
    const holders = () =>
      db.query<{ pid: number; app: string }>(
        `select a.pid, a.application_name as app from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where l.locktype = 'advisory' and l.database = (select oid from pg_database where datname = current_database())`,
      );
    // every advisory lock in the database is the job's, on its own session: none left on a pooled server connection
    expect((await holders()).map((h) => h.app)).toEqual(['queen-lifecycle']);
    const runner = async () =>
      (await db.query<{ by: string }>(`select value->>'by' as by from queen.system_state where key = 'lifecycle'`))[0]
        ?.by;
    await until(async () => (await runner()) !== undefined, 10_000);
    const first = (await runner())!;
    const leader = servers.find((s) => first.includes(`/${s.process.pid}/`))!;
    expect(leader).toBeDefined();
    await leader.stop();
    const tookOver = await until(async () => {
      const by = await runner();
      return by !== undefined && by !== first;
    }, 15_000);
    expect((await holders()).map((h) => h.app)).toEqual(['queen-lifecycle']);
    report('pooler, lifecycle takeover', { 'next run by the other instance after the stop': `${tookOver} ms` });
  });

  it('refuses DATABASE_DIRECT_URL without DATABASE_URL, naming both', async () => {
    await expect(startServer(undefined, { DATABASE_DIRECT_URL: db.url })).rejects.toThrow(
      /DATABASE_DIRECT_URL is set but DATABASE_URL is not/,
    );
    await expect(startServer(db.url, { DATABASE_DIRECT_URL: 'mysql://x' })).rejects.toThrow(
      /DATABASE_DIRECT_URL: must be a postgres/,
    );
  });
});
