// Transport failures of the pop (pop-routes.md): no pool connection in time → 500 {"error":"pool"},
// a statement cancelled by its timeout → 500 {"error":"pop failed"}; neither loses or half-claims.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

describe('pop failure paths', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ DB_POOL_SIZE: '2', DB_POOL_ACQUIRE_TIMEOUT_MS: '300', DB_STATEMENT_TIMEOUT_MS: '1500' });
    await pushMany(app.api, 'fail.q', 'p', 10);
  });
  afterAll(() => app.stop());

  it('answer 500 pool quickly when no connection is free, 500 pop failed when the statement times out, and claim nothing', async () => {
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table queen.cursors in access exclusive mode'); // every pop now blocks inside PostgreSQL
    try {
      const blocked = [popQueue(app.api, 'fail.q'), popQueue(app.api, 'fail.q')]; // they hold both pool connections
      await sleep(300);
      const starved = await popQueue(app.api, 'fail.q');
      expect(starved.status).toBe(500);
      expect(starved.text).toBe('{"error":"pool"}'); // the acquire timeout's answer, not the statement timeout's
      for (const r of await Promise.all(blocked)) {
        expect(r.status).toBe(500);
        expect(r.text).toBe('{"error":"pop failed"}');
      }
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect(await app.db.query('select 1 from queen.cursors where lease_id is not null')).toEqual([]);
    const after = await popQueue(app.api, 'fail.q');
    expect(after.status).toBe(200);
    expect(after.body.messages.map((m: any) => m.data.seq)).toEqual([...Array(10).keys()]);
  });

  it('a long poll whose attempt fails on the pool answers 500 pool too', async () => {
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table queen.cursors in access exclusive mode');
    try {
      const blocked = [popQueue(app.api, 'fail.other'), popQueue(app.api, 'fail.other')];
      await sleep(300);
      const r = await popQueue(app.api, 'fail.other', { wait: true, timeout: 5000 });
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: 'pool' });
      await Promise.all(blocked);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
  });

  it('health reports the database', async () => {
    const res = await app.api.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'healthy', database: 'connected' });
  });
});
