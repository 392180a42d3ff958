import { sql } from 'drizzle-orm';
import { databaseUrl, db, pool, readDb, readPool, readsFromReplica } from '@/db/pool';
import { migrate } from '@/db/migrate';
import { events } from '@/lib/broker/events';
import { instance } from '@/lib/broker/instance';
import { lifecycle } from '@/lib/broker/lifecycle';
import { startPushListener, stopPushListener } from '@/lib/broker/listener';
import { warmConnections } from '@/lib/broker/warm-up';
import { beginDrain } from '@/lib/broker/shutdown';
import { config } from '@/lib/config.mjs';
import { log } from '@/lib/log.mjs';

const slot = globalThis as unknown as {
  __queenBoot?: Promise<void>;
  __queenBooted?: boolean;
  /** The database's clock as the boot began to migrate (text: no rounding). */
  __queenBootTime?: string;
  /** What the app's server (scripts/serve.mjs, plain JavaScript) calls on SIGTERM/SIGINT. */
  __queenShutdown?: { drain: () => void; close: () => Promise<void> };
};

/**
 * Validates the configuration, brings the database schema up to date and starts listening for
 * pushes; exits on failure. Once per process: Next calls it through instrumentation.ts, and the
 * app's server (scripts/serve.mjs) awaits the same promise before it accepts a request.
 */
export function boot(): Promise<void> {
  slot.__queenBoot ??= run();
  return slot.__queenBoot;
}

/** Whether this process's boot has finished (GET /ready). */
export const booted = () => slot.__queenBooted === true;

/** The database's clock as this boot began to migrate. */
export const bootTime = () => slot.__queenBootTime;

async function run(): Promise<void> {
  try {
    config();
    // before migrating: function files applied from here on (by this boot or by a newer instance
    // booting meanwhile) are not a restore's (lib/broker/readiness.ts)
    slot.__queenBootTime = (await pool().query<{ now: string }>('select now()::text as now')).rows[0].now;
    const applied = await migrate(databaseUrl(), undefined, (newer) =>
      log('boot').warn(
        { newerMigrations: newer },
        "a newer release has migrated this database: its SQL function bodies stay (they serve this release's calls)",
      ),
    );
    if (applied.length) log('boot').info({ migrations: applied }, 'applied migrations');
    await refuseEncryptedQueuesWithoutKey();
    await warnWhereVacuumIsOff();
    await recordDedupWindow();
    await sayWhereDashboardReads();
    await startPushListener();
    await warmConnections();
    await instance.start(() => events.watched);
    lifecycle.start();
    slot.__queenBooted = true;
    slot.__queenShutdown = {
      drain: beginDrain,
      close: async () => {
        await lifecycle.stop();
        await stopPushListener();
        await instance.leave().catch(() => {});
        await pool().end();
        await readPool()?.end();
      },
    };
  } catch (err) {
    log('boot').fatal({ err: (err as Error).message }, 'boot failed');
    process.exit(1);
  }
}

/**
 * A replica that is down or is no standby must not keep the broker from serving: the dashboard's
 * reads fail (or read a primary) and its banner says so, while pushes and pops go on.
 */
async function sayWhereDashboardReads(): Promise<void> {
  if (!readsFromReplica()) return;
  try {
    const { rows } = await readDb().execute<{ standby: boolean }>(sql`select pg_is_in_recovery() as standby`);
    if (rows[0].standby) log('boot').info('the dashboard and the metrics read from the replica (DATABASE_READ_URL)');
    else
      log('boot').warn(
        'DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false): the dashboard reads it all the same',
      );
  } catch (err) {
    log('boot').warn(
      { err: (err as Error).message },
      'cannot reach the replica (DATABASE_READ_URL): dashboard reads fail until it answers',
    );
  }
}

async function refuseEncryptedQueuesWithoutKey(): Promise<void> {
  if (config().encryptionKey) return;
  const { rows } = await db().execute<{ name: string }>(
    sql`select name from queen.queues where encryption_enabled order by name limit 5`,
  );
  if (rows.length > 0) {
    throw new Error(
      `queues with encryptionEnabled exist (${rows.map((r) => r.name).join(', ')}) but QUEEN_ENCRYPTION_KEY is not set`,
    );
  }
}

/**
 * Every claim, ack and push updates rows of the broker's tables (cursors, backlog, partitions):
 * without autovacuum their dead row versions pile up and every pop reads more of them as the
 * database lives. Said once at boot, at warn level, naming what is off (docs/operations.md).
 */
async function warnWhereVacuumIsOff(): Promise<void> {
  const { rows } = await pool().query<{ everywhere: boolean; tables: string[] }>(
    `select current_setting('autovacuum')::boolean and current_setting('track_counts')::boolean as everywhere,
            array(select c.relname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'queen' and c.relkind = 'r'
                    and exists (select 1 from unnest(c.reloptions) o where o ~* '^autovacuum_enabled=(f|fa|fal|fals|false|n|no|of|off|0)$')
                  order by 1) as tables`,
  );
  const { everywhere, tables } = rows[0];
  if (!everywhere)
    log('boot').warn(
      { autovacuum: 'off' },
      "autovacuum (or track_counts) is off on this PostgreSQL: the broker's tables bloat and pops slow down as they live; turn it on",
    );
  if (tables.length)
    log('boot').warn(
      { tables },
      `autovacuum is off for ${tables.join(', ')}: these tables bloat and pops slow down as they live; reset autovacuum_enabled`,
    );
}

/** How long a removed message's transaction id is remembered (sql/021): the database's setting, the last instance to boot sets it. */
async function recordDedupWindow(): Promise<void> {
  await pool().query(
    `insert into queen.system_state (key, value) values ('dedup', jsonb_build_object('dedupWindowSeconds', $1::integer))
     on conflict (key) do update set value = excluded.value, updated_at = now()`,
    [config().lifecycle.dedupWindowSeconds],
  );
}
