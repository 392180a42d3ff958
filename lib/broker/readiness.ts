// Readiness (GET /ready), as opposed to liveness (GET /health): this instance should get traffic
// only once its boot is done (migrations and function files applied, the push listener started),
// not while it shuts down, and while the database answers with the schema this release expects. A load balancer takes it out of
// rotation while it boots, while the database is away, or when a database restored from an older
// backup misses a migration (an instance restarting then applies it; until then: not ready).
import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { FUNCTIONS_ROW, MIGRATIONS_DIR, readFunctions, readMigrations } from '@/db/migrate';
import { booted } from '@/lib/boot';
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
  let rows: { version: string; checksum: string }[];
  try {
    rows = (
      await db().execute<{ version: string; checksum: string }>(sql`select version, checksum from queen.migrations`)
    ).rows;
  } catch {
    return { ready: false, reason: 'database unreachable' };
  }
  const applied = new Map(rows.map((r) => [r.version, r.checksum]));
  const missing = [...(await expectedRows())]
    .filter(([version, checksum]) => applied.get(version) !== checksum)
    .map(([version]) => version);
  return missing.length ? { ready: false, reason: `not applied: ${missing.join(', ')}` } : { ready: true };
}
