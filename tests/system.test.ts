// The System page's route (GET /api/dashboard/system): every figure against PostgreSQL's own
// views read by the test, and the instances' process figures and lifecycle runs against the rows
// the heartbeat and the lifecycle job wrote.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

describe('system page', () => {
  let app: TestApp;
  const open: pg.Client[] = [];
  beforeAll(async () => {
    app = await startApp({ RETENTION_INTERVAL_MS: '200' });
  });
  afterAll(async () => {
    for (const c of open) await c.end().catch(() => {});
    await app.stop();
  });

  it('shows the database size, connections by state, the open transactions, autovacuum, lifecycle runs and instances', async () => {
    // two transactions left open, as a stuck client leaves them
    for (const name of ['system-test-a', 'system-test-b']) {
      const c = new pg.Client({ connectionString: app.db.url, application_name: name });
      await c.connect();
      await c.query('begin');
      await c.query('select 1');
      open.push(c);
    }
    await sleep(1200); // a lifecycle run or more (every 200 ms) and a heartbeat (the first is at boot)

    const [before] = await app.db.query<{ n: string }>('select pg_database_size(current_database()) as n');
    const res = await app.api.get('/api/dashboard/system');
    const [after] = await app.db.query<{ n: string }>('select pg_database_size(current_database()) as n');
    expect(res.status).toBe(200);
    const s = res.body;

    expect(s.database.sizeBytes).toBeGreaterThanOrEqual(Number(before.n));
    expect(s.database.sizeBytes).toBeLessThanOrEqual(Number(after.n));
    const [max] = await app.db.query<{ n: number }>("select current_setting('max_connections')::int as n");
    expect(s.database.maxConnections).toBe(max.n);

    // the two idle transactions: counted by state, listed oldest first with their application
    const idle = s.connections.find((c: any) => c.state === 'idle in transaction');
    const [sqlIdle] = await app.db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'idle in transaction'",
    );
    expect(idle.count).toBe(sqlIdle.n);
    expect(idle.count).toBe(2);
    const names = s.transactions.map((t: any) => t.application);
    expect(names.indexOf('system-test-a')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('system-test-a')).toBeLessThan(names.indexOf('system-test-b'));
    const a = s.transactions.find((t: any) => t.application === 'system-test-a');
    expect(a.state).toBe('idle in transaction');
    expect(a.seconds).toBeGreaterThan(0);
    expect(a.query).toBe('select 1');

    const [av] = await app.db.query<{ on: boolean }>("select current_setting('autovacuum')::boolean as on");
    expect(s.autovacuum.enabled).toBe(av.on);
    const dead = await app.db.query<{ name: string; n: number }>(
      "select schemaname || '.' || relname as name, n_dead_tup::int as n from pg_stat_user_tables where schemaname like 'queen%' order by n_dead_tup desc, 1 limit 15",
    );
    expect(s.autovacuum.tables.map((t: any) => t.name).sort()).toEqual(dead.map((d) => d.name).sort());

    // the lifecycle job's runs, newest first, the newest being the one it keeps as 'lifecycle'
    const [state] = await app.db.query<{ last: any; runs: any[] }>(
      "select (select value from queen.system_state where key = 'lifecycle') as last, (select value from queen.system_state where key = 'lifecycle_runs') as runs",
    );
    expect(s.lifecycle.runs.length).toBeGreaterThan(1);
    expect(s.lifecycle.runs.length).toBeLessThanOrEqual(20);
    expect(s.lifecycle.runs[0].at >= s.lifecycle.runs[1].at).toBe(true);
    expect(state.runs.length).toBeGreaterThanOrEqual(s.lifecycle.runs.length);
    expect(state.runs.length).toBeLessThanOrEqual(20);

    // this instance, with the process figures its heartbeat wrote
    const instances = await app.db.query<{ id: string; pid: number }>(
      "select id, (facts->>'pid')::int as pid from queen.instances where seen_at > now() - interval '30 seconds'",
    );
    expect(s.instances.map((i: any) => i.id)).toEqual(instances.map((i) => i.id));
    expect(s.instances).toHaveLength(1);
    expect(s.instances[0].facts.pid).toBe(instances[0].pid);
    expect(s.instances[0].facts.rssBytes).toBeGreaterThan(0);
  });

  it('keeps the lifecycle runs to the last 20', async () => {
    await sleep(5000);
    const [state] = await app.db.query<{ n: number }>(
      "select jsonb_array_length(value) as n from queen.system_state where key = 'lifecycle_runs'",
    );
    expect(state.n).toBe(20);
  });

  it("counts a holder's pops and empty pops with its address and user agent", async () => {
    await pushMany(app.api, 'sys.q', 'p0', 3);
    const as = { headers: { 'x-queen-consumer': 'sys-worker', 'user-agent': 'queen-client-js/9.9' } };
    expect((await popQueue(app.api, 'sys.q', { consumerGroup: 'g', batch: 3 }, as)).body.messages).toHaveLength(3);
    for (let i = 0; i < 2; i++)
      expect((await popQueue(app.api, 'sys.q', { consumerGroup: 'g', batch: 3 }, as)).status).toBe(204);
    let rows: any[] = [];
    for (let i = 0; i < 40 && rows.length === 0; i++) {
      await sleep(250); // the heartbeat writes them (every 5 s)
      rows = await app.db.query(
        "select address, user_agent, sum(pops)::int as pops, sum(empty_pops)::int as empty from queen.holder_clients where holder = 'sys-worker' group by 1, 2",
      );
    }
    expect(rows).toEqual([
      { address: expect.stringMatching(/127\.0\.0\.1/), user_agent: 'queen-client-js/9.9', pops: 3, empty: 2 },
    ]);
    const consumers = await app.api.get('/api/v1/consumers');
    const me = consumers.body.consumers.find((c: any) => c.holder === 'sys-worker');
    expect(me.client).toMatchObject({ userAgent: 'queen-client-js/9.9', pops: 3, emptyPops: 2 });
  });
});
