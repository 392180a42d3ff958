// A PostgreSQL 15 primary and its streaming replica on this machine (issue 33, item 4): initdb with
// wal_level=replica, pg_basebackup -R of it into a second data directory, that one started as a hot
// standby on its own port. Both run as the postgres user when the tests run as root (procs.ts).
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../../db/embedded.mjs';
import { PG_BIN } from './patroni';
import { have, listening, start, stopGroup, workDir, type Proc } from './procs';

export interface ReplicaPair {
  primaryUrl: string;
  standbyUrl: string;
  /** One query on the primary or the standby (a connection of its own, closed after). */
  primary: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string) => Promise<R[]>;
  standby: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string) => Promise<R[]>;
  output: () => string;
  stop: () => Promise<void>;
}

export function replicaMissing(): string | undefined {
  for (const bin of ['initdb', 'pg_basebackup', 'postgres'])
    if (!have(`${PG_BIN}/${bin}`)) return `${PG_BIN}/${bin} is not installed: apt-get install -y postgresql-15`;
  return undefined;
}

/** Runs a PostgreSQL tool to its end; throws with its output when it fails. */
async function run(name: string, args: string[]): Promise<void> {
  const proc = start(name, `${PG_BIN}/${name}`, args);
  const code = await new Promise<number | null>((resolve) => proc.child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`${name} exited ${code}:\n${proc.output()}`);
}

const query =
  (url: string) =>
  async <R extends pg.QueryResultRow>(text: string): Promise<R[]> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<R>(text)).rows;
    } finally {
      await c.end();
    }
  };

export async function startReplicaPair(): Promise<ReplicaPair> {
  const missing = replicaMissing();
  if (missing) throw new Error(missing);
  const { dir, cleanup } = workDir('replica');
  const procs: Proc[] = [];
  const stop = async () => {
    // the standby first, so that it does not log the primary's going away; SIGINT: a fast shutdown
    for (const p of procs.reverse()) await stopGroup(p.child, 10_000, 'SIGINT');
    cleanup();
  };
  try {
    const [primaryPort, standbyPort] = [await freePort(), await freePort()];
    const primaryDir = path.join(dir, 'primary');
    const standbyDir = path.join(dir, 'standby');
    await run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
    // initdb's pg_hba.conf trusts local and 127.0.0.1 connections, replication ones included
    const settings = (port: number) => [
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      '-c',
      'timezone=UTC',
    ];
    const primary = start('primary', `${PG_BIN}/postgres`, [
      '-D',
      primaryDir,
      ...settings(primaryPort),
      '-c',
      'wal_level=replica',
      '-c',
      'max_wal_senders=5',
      '-c',
      'wal_keep_size=256MB',
    ]);
    procs.push(primary);
    await listening(primaryPort, primary);
    const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    await waitForQuery(primaryUrl, primary);
    await run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standbyDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    const standby = start('standby', `${PG_BIN}/postgres`, [
      '-D',
      standbyDir,
      ...settings(standbyPort),
      '-c',
      'hot_standby=on',
    ]);
    procs.push(standby);
    await listening(standbyPort, standby);
    const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`;
    await waitForQuery(standbyUrl, standby);
    const [{ standing }] = await query(standbyUrl)<{ standing: boolean }>('select pg_is_in_recovery() as standing');
    if (!standing) throw new Error(`the standby is not in recovery:\n${standby.output()}`);
    return {
      primaryUrl,
      standbyUrl,
      primary: query(primaryUrl),
      standby: query(standbyUrl),
      output: () => procs.map((p) => `--- ${p.name}\n${p.output()}`).join('\n'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A server accepts TCP before it accepts queries (the standby: until it reaches consistency). */
async function waitForQuery(url: string, proc: Proc, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await query(url)('select 1');
      return;
    } catch (err) {
      if (proc.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`${proc.name} does not answer (${(err as Error).message}):\n${proc.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
