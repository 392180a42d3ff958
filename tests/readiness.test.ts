// GET /ready against GET /health: readiness is 200 only once this release's migrations and function
// files are applied and the pool answers; liveness stays /health.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

let app: TestApp;
/** A query on the admin database (the app's own may refuse connections). */
async function admin(text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  app = await startApp();
}, 120_000);
afterAll(async () => {
  if (app) await admin(`alter database "${app.db.name}" allow_connections true`).catch(() => {});
  await app?.stop();
});

describe('GET /ready', () => {
  it('is 200 once booted, with the migrations applied and the database answering', async () => {
    const res = await app.api.get('/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', migrations: 'applied', database: 'connected' });
  });

  it('is 503 naming the migration when one of this release is not applied (a database restored from before it)', async () => {
    const [last] = await app.db.query<{ version: string; checksum: string }>(
      `select version, checksum from queen.migrations where version <> 'functions' order by version desc limit 1`,
    );
    await app.db.query(`delete from queen.migrations where version = $1`, [last.version]);
    try {
      const res = await app.api.get('/ready');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(res.body).toEqual({ status: 'not ready', reason: `not applied: ${last.version}` });
      expect((await app.api.get('/health')).status).toBe(200); // alive all the same
    } finally {
      await app.db.query(`insert into queen.migrations (version, checksum) values ($1, $2)`, [
        last.version,
        last.checksum,
      ]);
    }
    expect((await app.api.get('/ready')).status).toBe(200);
  });

  describe('with function files other than its own', () => {
    let ours: { checksum: string; applied_at: string };
    beforeAll(async () => {
      [ours] = await app.db.query(
        `select checksum, applied_at::text as applied_at from queen.migrations where version = 'functions'`,
      );
    });
    afterEach(async () => {
      await app.db.query(`delete from queen.migrations where version = '999_newer_release'`);
      await app.db.query(
        `update queen.migrations set checksum = $1, applied_at = $2::timestamptz where version = 'functions'`,
        [ours.checksum, ours.applied_at],
      );
    });
    const recordFunctions = (checksum: string, appliedAt: string) =>
      app.db.query(`update queen.migrations set checksum = $1, applied_at = ${appliedAt} where version = 'functions'`, [
        checksum,
      ]);

    it('stays 200 when a newer instance applied its function files after this one booted (a rolling upgrade)', async () => {
      await recordFunctions('a newer release', 'now()');
      expect((await app.api.get('/ready')).status).toBe(200);
    });

    it('stays 200 when a newer release migrated the database, whenever its function files were applied', async () => {
      await recordFunctions('a newer release', "now() - interval '1 day'");
      await app.db.query(`insert into queen.migrations (version, checksum) values ('999_newer_release', 'x')`);
      expect((await app.api.get('/ready')).status).toBe(200);
    });

    it('is 503 when the function files recorded are older than its boot and not its own (a restore)', async () => {
      await recordFunctions('an older release', "now() - interval '1 day'");
      const res = await app.api.get('/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not ready', reason: 'not applied: functions' });
    });
  });

  it('is 503 while the pool cannot reach the database, and 200 again after', async () => {
    await admin(`alter database "${app.db.name}" allow_connections false`);
    await admin(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
      [app.db.name],
    );
    try {
      let res = await app.api.get('/ready');
      // a connection the pool had may die on first use: the next request meets the refusal
      if (res.status === 200) res = await app.api.get('/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not ready', reason: 'database unreachable' });
    } finally {
      await admin(`alter database "${app.db.name}" allow_connections true`);
    }
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = (await app.api.get('/ready')).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(200);
  });
});
