// The boot opens DB_POOL_WARM pool connections and runs the broker's hot functions once on each, in
// a transaction it rolls back (lib/broker/warm-up.ts), before the instance serves: they are open and
// idle when it starts serving, and nothing of the warm-up is left in the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';
import { startServer, type TestServer } from './support/server';

let db: TestDatabase;
beforeAll(async () => {
  db = await testDatabase();
  // a queue served before: on a database with none, nothing is warmed (the last case)
  const server = await startServer(db.url);
  await fetch(`${server.url}/api/v1/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ queue: 'warm.q', payload: { n: 0 } }] }),
  });
  await server.stop();
});
afterAll(async () => {
  await db?.drop();
});

/** The pool connections of `server`, as PostgreSQL lists them: their state and last statement. */
const poolConnections = (server: TestServer, database = db) =>
  database.query<{ state: string; query: string }>(
    'select state, query from pg_stat_activity where datname = $1 and application_name = $2',
    [database.name, `queen-pg/${server.process.pid}`],
  );

describe('warming connections at boot', () => {
  it('opens DB_POOL_WARM connections before it serves, runs the hot functions on them, keeps them and leaves nothing', async () => {
    const server = await startServer(db.url, { DB_POOL_WARM: '3' });
    try {
      // the boot's own statements run one at a time on one of them: without the warm-up, one connection
      const connections = await poolConnections(server);
      expect(connections.map((c) => c.state)).toEqual(['idle', 'idle', 'idle']);
      // the warm-up's rollback is the last statement of those the boot did not use again
      expect(connections.filter((c) => c.query === 'rollback').length).toBeGreaterThanOrEqual(2);
      expect(server.output()).not.toContain('warming a database connection failed');
      const [left] = await db.query<{ queues: number; messages: number }>(
        `select (select count(*) from queen.queues)::int as queues, (select count(*) from queen.messages)::int as messages`,
      );
      expect(left).toEqual({ queues: 1, messages: 1 });
      // the warmed connections serve: a push and a pop through them
      const pushed = await fetch(`${server.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ queue: 'warm.q', payload: { n: 1 } }] }),
      });
      expect(pushed.status).toBe(201);
      const popped = await fetch(`${server.url}/api/v1/pop/queue/warm.q?autoAck=true&batch=2`);
      expect((await popped.json()).messages.map((m: { data: unknown }) => m.data)).toEqual([{ n: 0 }, { n: 1 }]);
      // kept past the pool's idle timeout (10 s), which closes the connections above them
      await new Promise((r) => setTimeout(r, 11_000));
      expect(await poolConnections(server)).toHaveLength(3);
    } finally {
      await server.stop();
    }
  }, 30_000);

  it('warms them under pop maintenance too, which refuses its pop and claim, without a warning', async () => {
    await db.query(`select queen.set_pop_maintenance(true, 'warm-up test', 'test')`);
    const server = await startServer(db.url, { DB_POOL_WARM: '3' });
    try {
      expect(await poolConnections(server)).toHaveLength(3);
      expect(server.output()).not.toContain('warming a database connection failed');
    } finally {
      await server.stop();
      await db.query(`select queen.set_pop_maintenance(false, 'warm-up test', 'test')`);
    }
  });

  it('opens none with DB_POOL_WARM=0', async () => {
    const server = await startServer(db.url, { DB_POOL_WARM: '0' });
    try {
      expect(await poolConnections(server)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it('warms nothing on a database with no queue yet, so its empty tables hold no dead rows', async () => {
    const empty = await testDatabase();
    const server = await startServer(empty.url, { DB_POOL_WARM: '3' });
    try {
      expect(await poolConnections(server, empty)).toHaveLength(1);
      // a tuple inserted, even rolled back, takes a page
      const [dead] = await empty.query<{ n: number }>(
        `select sum(pg_relation_size(c))::int as n
           from unnest(array['queen.queues', 'queen.partitions', 'queen.messages', 'queen.cursors']::regclass[]) c`,
      );
      expect(dead.n).toBe(0);
    } finally {
      await server.stop();
      await empty.drop();
    }
  });
});
