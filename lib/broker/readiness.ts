// Readiness (GET /ready), as opposed to liveness (GET /health): this instance should get traffic
// only once its boot is done (migrations and function files applied, the push listener started),
// not while it shuts down, and while the database answers with the schema this release expects. A load balancer takes it out of
// rotation while it boots, while the database is away, or when a database restored from an older
// backup misses a migration (an instance restarting then applies it; until then: not ready).
// Function files other than this release's are expected in a rolling upgrade: a newer instance
// applied them after this one booted, or a newer release migrated the database. Only bodies older
// than this boot that are not its own (a restore) make it not ready; else every instance of the
// older release would leave the balancer at once, the moment the first new one boots.
import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { FUNCTIONS_ROW, MIGRATIONS_DIR, newerMigrations, readFunctions, readMigrations } from '@/db/migrate';
import { booted, bootTime } from '@/lib/boot';
import { draining } from './shutdown';

export type Readiness = { ready: true } | { ready: false; reason: string };

let expected: Promise<Map<string, string>> | undefined;

/** version → checksum of every migration of this release, and of its function files. */
function expectedRows(): Promise<Map<string, string>> {
  expected ??= (async () => {
    const rows = new Map((await readMigrations(MIGRATIONS_DIR)).map((m) => [m.version, m.checksum]));
    const functions = await readFunctions(MIGRATIONS_DIR);
    if (functions.sql !== '') rows.set(FUNCTIONS_ROW, functions.checksum);
    return rows;
  })();
  return expected;
}

export async function readiness(): Promise<Readiness> {
  if (!booted()) return { ready: false, reason: 'booting' };
  if (draining()) return { ready: false, reason: 'shutting down' };
  let rows: { version: string; checksum: string; sinceBoot: boolean }[];
  try {
    rows = (
      await db().execute<{ version: string; checksum: string; sinceBoot: boolean }>(
        sql`select version, checksum, applied_at > ${bootTime() ?? 'infinity'}::timestamptz as "sinceBoot" from queen.migrations`,
      )
    ).rows;
  } catch {
    return { ready: false, reason: 'database unreachable' };
  }
  const applied = new Map(rows.map((r) => [r.version, r.checksum]));
  const ours = await expectedRows();
  const newerFunctions =
    rows.some((r) => r.version === FUNCTIONS_ROW && r.sinceBoot) ||
    newerMigrations(applied.keys(), ours.keys()).length > 0;
  const missing = [...ours]
    .filter(
      ([version, checksum]) => applied.get(version) !== checksum && !(version === FUNCTIONS_ROW && newerFunctions),
    )
    .map(([version]) => version);
  return missing.length ? { ready: false, reason: `not applied: ${missing.join(', ')}` } : { ready: true };
}
