// `npm start`: PostgreSQL (embedded under .data/ unless DATABASE_URL is set), a build when the
// sources changed, then the app's server (scripts/serve.mjs). Migrations apply themselves when it boots.
// `npm run dev` (--dev): the same, without the build, and the server in its dev mode (Next compiles
// on demand): the same settings, PostgreSQL, port and API answers as `npm start`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../db/embedded.mjs';
import { loadConfig } from '../lib/config.mjs';
import { flushLog, initLogger, log } from '../lib/log.mjs';
import { buildIfStale } from './lib/build.mjs';
import { logStream } from './lib/log-stream.mjs';
import { onStopSignals } from './lib/signals.mjs';

const root = path.join(import.meta.dirname, '..');

let cfg;
try {
  cfg = loadConfig();
} catch (err) {
  console.error(`[start] ${err.message}`);
  process.exit(1);
}
// stdout is the server's JSON lines (or readable ones, LOG_PRETTY): this script's lines join them
initLogger({ level: cfg.log.level, stream: await logStream(cfg) });

let embedded;
let databaseUrl = cfg.databaseUrl;
if (!databaseUrl) {
  const dataDir = path.resolve(root, cfg.dataDir);
  try {
    embedded = await startEmbeddedPostgres(dataDir);
  } catch (err) {
    console.error(
      `[start] ${err instanceof EmbeddedPostgresError ? err.message : `cannot start the embedded PostgreSQL: ${err?.message ?? err}`}`,
    );
    process.exit(1);
  }
  databaseUrl = embedded.url;
  const moved =
    embedded.dataDir === dataDir ? '' : ` (the postgres user cannot reach ${dataDir}: a folder above it is private)`;
  log('start').info(
    { port: embedded.port, dataDir: embedded.dataDir },
    `embedded PostgreSQL on 127.0.0.1:${embedded.port}, data in ${embedded.dataDir}${moved}`,
  );
} else {
  log('start').info('using the PostgreSQL of DATABASE_URL');
}

const dev = process.argv.includes('--dev');
try {
  if (!dev) buildIfStale({ toStderr: true });
} catch {
  await embedded?.stop();
  process.exit(1);
}

const server = spawn(process.execPath, [path.join(root, 'scripts', 'serve.mjs'), ...(dev ? ['--dev'] : [])], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: databaseUrl, NEXT_TELEMETRY_DISABLED: '1' },
});

// The server may get the same signal from the process group (Ctrl-C, systemd) and from here: it
// counts signals close together as one, so passing each delivery on once is safe either way, and
// needed when only this process was signalled. A later, second signal is passed on too: the
// server then exits at once.
const pass = (signal) => {
  if (server.exitCode === null && server.signalCode === null) server.kill(signal);
};
onStopSignals({ first: pass, again: pass });

server.on('exit', async (code, signal) => {
  await embedded?.stop();
  await flushLog();
  // the server's own verdict: 0 after a graceful stop, 1 after a listen error or a second signal
  process.exit(code ?? (signal ? 1 : 0));
});
