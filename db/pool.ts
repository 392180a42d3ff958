import pg from 'pg';
import type { SQL } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import { config } from '@/lib/config.mjs';
import * as schema from './schema';
import { log } from '@/lib/log.mjs';

export type Db = NodePgDatabase<typeof schema>;

interface Handles {
  pool: pg.Pool;
  db: Db;
}

// One pool per process; the globalThis slot survives `next dev` module reloads.
const slot = globalThis as unknown as { __queenDb?: Handles; __queenReadDb?: Handles };

/** DATABASE_URL: what the pool connects to, PostgreSQL itself or a pooler in front of it. */
export function pooledDatabaseUrl(): string {
  const url = config().databaseUrl;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set. Start the app with `npm start`, which provides an embedded PostgreSQL when it is unset.',
    );
  }
  return url;
}

/**
 * What the connections that need a session connect to: the LISTEN connection
 * (lib/broker/listener.ts), the lifecycle job's advisory lock and session settings
 * (lib/broker/lifecycle.ts), and migrations' advisory lock (lib/boot.ts). DATABASE_DIRECT_URL when
 * set, since DATABASE_URL is then a transaction-mode pooler that would hand each of their
 * statements to any server connection; DATABASE_URL otherwise, which then serves both.
 */
export function databaseUrl(): string {
  return config().databaseDirectUrl ?? pooledDatabaseUrl();
}

/** Whether the pool goes through a transaction-mode pooler (DATABASE_DIRECT_URL is set). */
export const pooled = (): boolean => config().databaseDirectUrl !== undefined;

function createPool(url: string, role: 'pg' | 'pg-read' = 'pg'): pg.Pool {
  const { db: c } = config();
  const pool = new pg.Pool({
    connectionString: url,
    max: c.poolSize,
    // the connections warmed at boot stay open: a new one pays the first calls' planning again
    min: role === 'pg' && !pooled() ? c.warmConnections : 0,
    connectionTimeoutMillis: c.acquireTimeoutMs,
    // A startup parameter: a transaction-mode pooler refuses it (PgBouncer: "unsupported startup
    // parameter: statement_timeout"), so through one the timeout comes from the database's role
    // setting or the pooler's query_timeout (docs/scaling.md, step 3; boot warns when neither is visible).
    statement_timeout: pooled() ? undefined : c.statementTimeoutMs,
    // one name per instance, so pg_stat_activity tells the instances apart
    application_name: `queen-${role}/${process.pid}`,
    // A read pool pointed at a primary by mistake still refuses writes; on a standby this is moot.
    options: role === 'pg-read' && !pooled() ? '-c default_transaction_read_only=on' : undefined,
  });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', (err) => log('db').warn({ err: err.message }, 'idle pool client lost; the pool replaces it'));
  if (pooled() && role === 'pg')
    pool.once('connect', (client: pg.PoolClient) => {
      client.query<{ t: string }>("select current_setting('statement_timeout') as t").then(
        ({ rows }) => {
          if (rows[0]?.t === '0')
            log('db').warn(
              { statementTimeoutMs: c.statementTimeoutMs },
              `statements through the pooler (DATABASE_URL) have no statement_timeout: set one on the database's role (ALTER ROLE ... SET statement_timeout = '${c.statementTimeoutMs}ms') or the pooler's query_timeout`,
            );
        },
        () => {},
      );
    });
  return pool;
}

function handles(): Handles {
  if (!slot.__queenDb) {
    const pool = createPool(pooledDatabaseUrl());
    slot.__queenDb = { pool, db: drizzle({ client: pool, schema }) };
  }
  return slot.__queenDb;
}

export const pool = (): pg.Pool => handles().pool;
export const db = (): Db => handles().db;

/** What runs a statement: the pool's db(), or a transaction. */
export type Executor = Pick<Db, 'execute'>;

const dialect = new PgDialect();
const statementNames = new Map<string, string>();
// Bumped when PostgreSQL refuses a prepared statement whose result columns changed under it (a
// newer release replaced the function it calls): every connection then prepares it anew.
let generation = 0;
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';
const MAX_PREPARED = 32;
// Values as Drizzle's execute() gives them (drizzle-orm/node-postgres): dates, times and
// intervals, and arrays of them, as PostgreSQL wrote them, so a row reads alike on either path.
const AS_WRITTEN = new Set([
  pg.types.builtins.TIMESTAMPTZ,
  pg.types.builtins.TIMESTAMP,
  pg.types.builtins.DATE,
  pg.types.builtins.INTERVAL,
  1115,
  1182,
  1185,
  1187,
  1231,
]);
const types = {
  getTypeParser: (id: number, format?: 'text' | 'binary') =>
    AS_WRITTEN.has(id) ? (value: string) => value : pg.types.getTypeParser(id, format),
};

/**
 * Runs a statement of the hot paths (the pop, the ack, the push) as a named prepared statement on
 * the pool: PostgreSQL parses, analyses and plans it once per connection instead of per call
 * (docs/performance.md, "Bookkeeping off the hot path"). In a transaction, or through a
 * transaction-mode pooler (DATABASE_DIRECT_URL set: a statement prepared on one server connection
 * is unknown on the next), it runs as any other statement.
 */
export async function executePrepared<R extends pg.QueryResultRow>(exec: Executor, query: SQL): Promise<{ rows: R[] }> {
  const unnamed = () => exec.execute<R>(query) as Promise<{ rows: R[] }>;
  if (exec !== db() || pooled()) return unnamed();
  const { sql: text, params } = dialect.sqlToQuery(query);
  let name = statementNames.get(text);
  if (name === undefined) {
    // a caller whose text varies would leave a statement per text on every connection
    if (statementNames.size >= MAX_PREPARED) return unnamed();
    name = `queen_${statementNames.size}`;
    statementNames.set(text, name);
  }
  const run = () => pool().query<R>({ name: `${name}_${generation}`, text, values: params, types });
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code !== '0A000' || !(err as Error).message.includes(RESULT_TYPE_CHANGED)) throw err;
    generation++;
    return run();
  }
}

/** Whether DATABASE_READ_URL is set: the dashboard's reads and the metrics' figures then come from a replica. */
export const readsFromReplica = (): boolean => config().databaseReadUrl !== undefined;

/**
 * Where the dashboard's reads and the metrics' figures go: the replica's pool when
 * DATABASE_READ_URL is set, the primary's otherwise. Only for statements that write nothing
 * (a hot standby refuses the rest); every write, and every read an action depends on, uses db().
 */
export function readDb(): Db {
  const url = config().databaseReadUrl;
  if (!url) return db();
  if (!slot.__queenReadDb) {
    const pool = createPool(url, 'pg-read');
    slot.__queenReadDb = { pool, db: drizzle({ client: pool, schema }) };
  }
  return slot.__queenReadDb.db;
}

/** The read pool when there is one (its gauges, its end at shutdown). */
export const readPool = (): pg.Pool | undefined => slot.__queenReadDb?.pool;
