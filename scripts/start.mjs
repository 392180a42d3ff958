// `npm start`: PostgreSQL (embedded under .data/ unless DATABASE_URL is set), a build when the
// sources changed, then the app's server (scripts/serve.mjs), imported into this same process.
// Migrations apply themselves when it boots.
// `npm run dev` (--dev): the same, without the build, and the server in its dev mode (Next compiles
// on demand): the same settings, PostgreSQL, port and API answers as `npm start`.
import path from 'node:path';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../db/embedded.mjs';
import { loadConfig } from '../lib/config.mjs';
import { initLogger, log } from '../lib/log.mjs';
import { buildIfStale } from './lib/build.mjs';
import { beforeExit } from './lib/exit.mjs';
import { logStream } from './lib/log-stream.mjs';

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

// The server runs in this process (no supervisor child holding memory beside it): serve.mjs reads
// its settings from the environment, handles the signals (scripts/lib/signals.mjs) and ends the
// process through scripts/lib/exit.mjs, which stops the embedded PostgreSQL after the server.
process.env.DATABASE_URL = databaseUrl;
process.env.NEXT_TELEMETRY_DISABLED = '1';
if (embedded) {
  beforeExit(() => embedded.stop());
  // an exit by any other path (an uncaught error, a failed boot) leaves no PostgreSQL behind
  process.once('exit', () => embedded.kill());
}
await import('./serve.mjs');
