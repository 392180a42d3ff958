import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../../db/embedded.mjs';
import { have, listening, start, workDir, writeOwned, type Proc } from './procs';

export interface PgBouncer {
  port: number;
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  url: (databaseUrl: string) => string;
  /** A SHOW command on the admin console (`show pools`, `show clients`...). */
  show: <R = Record<string, unknown>>(what: string) => Promise<R[]>;
  proc: Proc;
  stop: () => Promise<void>;
}

/**
 * PgBouncer in transaction mode on a free port, in front of the PostgreSQL at `host:port` (trust
 * authentication, as the test server's). `poolSize` server connections per (database, user) at most:
 * fewer than the app's pools ask for, so that transaction pooling really multiplexes.
 */
export async function startPgBouncer(
  { host, port: serverPort }: { host: string; port: number },
  { poolSize = 8, extra = '' } = {},
): Promise<PgBouncer> {
  if (!have('pgbouncer')) throw new Error('pgbouncer is not installed: apt-get install -y pgbouncer (.ci/run does)');
  const { dir, cleanup } = workDir('pgbouncer');
  const port = await freePort();
  writeOwned(path.join(dir, 'users.txt'), '"postgres" ""\n');
  writeOwned(
    path.join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${host} port=${serverPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/users.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 2000
server_login_retry = 1
logfile =
pidfile =
${extra}
`,
  );
  const proc = start('pgbouncer', 'pgbouncer', [path.join(dir, 'pgbouncer.ini')]);
  await listening(port, proc);
  const url = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  return {
    port,
    url,
    show: async (what) => {
      // the admin console speaks the simple protocol only: a query without parameters
      const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/pgbouncer` });
      await admin.connect();
      try {
        return (await admin.query(`show ${what}`)).rows;
      } finally {
        await admin.end();
      }
    },
    proc,
    stop: async () => {
      await proc.stop();
      cleanup();
    },
  };
}
