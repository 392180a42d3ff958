import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { config } from '@/lib/config.mjs';
import * as schema from './schema';
import { log } from '@/lib/log.mjs';

export type Db = NodePgDatabase<typeof schema>;

interface Handles {
  pool: pg.Pool;
  db: Db;
}

// One pool per process; the globalThis slot survives `next dev` module reloads.
const slot = globalThis as unknown as { __queenDb?: Handles };

export function databaseUrl(): string {
  const url = config().databaseUrl;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set. Start the app with `npm start`, which provides an embedded PostgreSQL when it is unset.',
    );
  }
  return url;
}

function createPool(url: string): pg.Pool {
  const { db: c } = config();
  const pool = new pg.Pool({
    connectionString: url,
    max: c.poolSize,
    connectionTimeoutMillis: c.acquireTimeoutMs,
    statement_timeout: c.statementTimeoutMs,
    // one name per instance, so pg_stat_activity tells the instances apart
    application_name: `queen-pg/${process.pid}`,
  });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', (err) => log('db').warn({ err: err.message }, 'idle pool client lost; the pool replaces it'));
  return pool;
}

function handles(): Handles {
  if (!slot.__queenDb) {
    const pool = createPool(databaseUrl());
    slot.__queenDb = { pool, db: drizzle({ client: pool, schema }) };
  }
  return slot.__queenDb;
}

export const pool = (): pg.Pool => handles().pool;
export const db = (): Db => handles().db;
