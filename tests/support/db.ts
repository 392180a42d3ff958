import pg from 'pg';
import { migrate } from '@/db/migrate';
import { createDatabase, dropDatabase } from '../../scripts/lib/test-db.mjs';

const adminUrl = () => process.env.TEST_ADMIN_DATABASE_URL as string;

export interface TestDatabase {
  name: string;
  url: string;
  /** A small pool for the test's own queries (assertions, locks). */
  pool: pg.Pool;
  query: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;
  drop: () => Promise<void>;
}

/** A fresh database for one test file; `migrated` applies sql/ first. */
export async function testDatabase({ migrated = true } = {}): Promise<TestDatabase> {
  const { name, url } = await createDatabase(adminUrl());
  if (migrated) await migrate(url);
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  // The drop below ends connections by force; one that is still closing must not fail the run.
  pool.on('error', () => {});
  return {
    name,
    url,
    pool,
    query: async (text, values) => (await pool.query(text, values)).rows,
    drop: async () => {
      // a client still waiting on a lock must not hold the run up: the forced drop below ends it
      await Promise.race([pool.end(), new Promise((r) => setTimeout(r, 5000).unref())]);
      await dropDatabase(adminUrl(), name);
    },
  };
}
