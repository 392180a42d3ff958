// Throwaway databases for the tests: created on the server of an admin URL, dropped after.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createDatabase(adminUrl, prefix = 'queen_test') {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  return { name, url: withDatabase(adminUrl, name) };
}

const DROP_TIMEOUT_MS = 30_000;

/**
 * Drops a test database. A drop that cannot finish in DROP_TIMEOUT_MS (PostgreSQL 15+ waits for every
 * backend of the cluster to absorb a barrier, and one blocked elsewhere holds it up) is given up:
 * the database is left behind, what the cluster's backends were doing is printed, and the run goes on.
 */
export async function dropDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl, statement_timeout: DROP_TIMEOUT_MS });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } catch (err) {
    if (err?.code !== '57014') throw err;
    const { rows } = await client.query(
      `select pid, datname, backend_type, state, wait_event_type, wait_event, now() - query_start as running, left(query, 120) as query
         from pg_stat_activity where pid <> pg_backend_pid() and state is distinct from 'idle' order by query_start`,
    );
    console.warn(
      `[test-db] drop of ${name} gave up after ${DROP_TIMEOUT_MS} ms; the database is left behind. Backends not idle:\n${rows.map((r) => JSON.stringify(r)).join('\n')}`,
    );
  } finally {
    await client.end();
  }
}
