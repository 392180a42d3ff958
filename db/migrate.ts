import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

// Any constant works; it only has to be the same for every instance of the app.
export const MIGRATION_LOCK = 0x5155_454e; // "QUEN"

export const MIGRATIONS_DIR = path.join(process.cwd(), 'sql');
export const FUNCTIONS_ROW = 'functions';

interface Migration {
  version: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), 'utf8');
      return { version: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** sql/functions/*.sql: the current body of every SQL function, one file per area. */
export async function readFunctions(dir: string): Promise<{ sql: string; checksum: string }> {
  const functionsDir = path.join(dir, 'functions');
  const files = (await readdir(functionsDir).catch(() => [] as string[])).filter((f) => f.endsWith('.sql')).sort();
  const texts = await Promise.all(files.map((f) => readFile(path.join(functionsDir, f), 'utf8')));
  const sql = texts.join('\n');
  return { sql, checksum: createHash('sha256').update(sql).digest('hex') };
}

/** The versions a database records that this release does not have: a newer release migrated it. */
export function newerMigrations(recorded: Iterable<string>, ours: Iterable<string>): string[] {
  const known = new Set(ours);
  return [...recorded].filter((v) => v !== FUNCTIONS_ROW && !known.has(v)).sort();
}

/**
 * Applies the pending sql/NNN_*.sql in order, then the function files, all in one transaction,
 * under a session advisory lock so that instances starting together take turns. A landed
 * migration whose text changed is an error: migrations are append-only (tables, indexes, data,
 * drops of replaced signatures). The function files hold each function's current body, so a
 * change to a function is a diff of its file; they are applied with every pending migration, and
 * alone when their set changed. Except on a database
 * a newer release has migrated: an instance of the older one restarting in a rolling upgrade keeps
 * the newer bodies (they serve its calls: docs/decisions.md, "The previous release's SQL calls are
 * a contract") rather than put its own back under the newer instances; `onNewer` hears of it.
 */
export async function migrate(
  databaseUrl: string,
  dir = MIGRATIONS_DIR,
  onNewer: (versions: string[]) => void = () => {},
): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'queen-migrate' });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`
      create schema if not exists queen;
      create table if not exists queen.migrations (
        version text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`);
    const { rows } = await client.query<{ version: string; checksum: string }>(
      'select version, checksum from queen.migrations',
    );
    const done = new Map(rows.map((r) => [r.version, r.checksum]));
    for (const m of migrations) {
      const landed = done.get(m.version);
      if (landed !== undefined && landed !== m.checksum)
        throw new Error(`Migration ${m.version} was edited after it was applied; add a new migration instead.`);
    }
    const pending = migrations.filter((m) => !done.has(m.version));
    const functions = await readFunctions(dir);
    const newer = newerMigrations(
      done.keys(),
      migrations.map((m) => m.version),
    );
    const functionsChanged = functions.sql !== '' && done.get(FUNCTIONS_ROW) !== functions.checksum;
    if (functionsChanged && newer.length > 0) onNewer(newer);
    const withFunctions = functions.sql !== '' && newer.length === 0 && (functionsChanged || pending.length > 0);
    if (pending.length === 0 && !withFunctions) return applied;
    // The pending migrations and the function files in one transaction: a migration that drops a
    // replaced signature commits with the body that replaces it, so no instance ever calls a
    // function that is gone for a moment (an older release's, during a rolling upgrade). A
    // migration that adds a trigger or an index to a table under traffic can lose a deadlock to
    // an older instance's statement (the rolling-upgrade test saw it): try it again.
    for (let attempt = 1; ; attempt++) {
      let step = '';
      try {
        await client.query('begin');
        for (const m of pending) {
          step = `Migration ${m.version} failed`;
          await client.query(m.sql);
          await client.query('insert into queen.migrations (version, checksum) values ($1, $2)', [
            m.version,
            m.checksum,
          ]);
        }
        if (withFunctions) {
          step = 'SQL functions failed';
          // Bodies may call functions defined later in the set.
          await client.query('set local check_function_bodies = off');
          await client.query(functions.sql);
          await client.query(
            `insert into queen.migrations (version, checksum) values ($1, $2)
             on conflict (version) do update set checksum = excluded.checksum, applied_at = now()`,
            [FUNCTIONS_ROW, functions.checksum],
          );
        }
        await client.query('commit');
        break;
      } catch (err) {
        await client.query('rollback');
        if ((err as { code?: string }).code === '40P01' && attempt < 5) continue;
        throw new Error(`${step}: ${(err as Error).message}`);
      }
    }
    applied.push(...pending.map((m) => m.version), ...(withFunctions ? [FUNCTIONS_ROW] : []));
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
  return applied;
}
