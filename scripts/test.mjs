// `npm test`: every test. Formatting and lint (Biome), unit and integration tests (Vitest, real PostgreSQL, real HTTP server),
// then the Playwright suite in a real Chromium, even when Vitest failed; a summary names what failed. With DATABASE_URL unset it runs an embedded
// PostgreSQL in a throwaway directory; with it set, it creates and drops its own databases there.
//   node scripts/test.mjs            everything
//   node scripts/test.mjs --unit     Vitest only (extra arguments go to Vitest)
//   node scripts/test.mjs --e2e      Playwright only (extra arguments go to Playwright)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../db/embedded.mjs';
import { buildIfStale } from './lib/build.mjs';
import { CHROMIUM_MISSING, provideChromium } from './lib/chromium.mjs';
import { e2ePorts, runAll } from './lib/runners.mjs';
import { createDatabase, dropDatabase } from './lib/test-db.mjs';

const root = path.join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const only = args.includes('--unit') ? 'unit' : args.includes('--e2e') ? 'e2e' : undefined;
const passthrough = args.filter((a) => a !== '--unit' && a !== '--e2e');

const chromium = only === 'unit' ? undefined : await provideChromium();
if (only !== 'unit' && !chromium) {
  console.error(CHROMIUM_MISSING);
  process.exit(1);
}

try {
  buildIfStale();
} catch {
  process.exit(1); // next build printed why
}

let embedded;
let tmpDir;
let adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-test-pg-'));
  fs.chmodSync(tmpDir, 0o755); // the embedded server runs as the postgres user
  try {
    embedded = await startEmbeddedPostgres(path.join(tmpDir, 'data'), { fast: true });
  } catch (err) {
    console.error(
      `[test] ${err instanceof EmbeddedPostgresError ? err.message : `cannot start the embedded PostgreSQL: ${err?.message ?? err}`}`,
    );
    fs.rmSync(tmpDir, { recursive: true, force: true });
    process.exit(1);
  }
  adminUrl = embedded.url;
  console.log(`[test] embedded PostgreSQL on 127.0.0.1:${embedded.port} (throwaway, ${tmpDir})`);
}

const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** @type {import('./lib/runners.mjs').Runner[]} */
const runners = [];
if (only !== 'e2e') {
  // the formatter and the linter (biome.json): a second or two, over the whole tree
  runners.push({ name: 'biome', command: bin('biome'), args: ['ci', '.'], cwd: root });
  runners.push({
    name: 'vitest',
    command: bin('vitest'),
    args: ['run', ...passthrough],
    cwd: root,
    env: { TEST_ADMIN_DATABASE_URL: adminUrl },
  });
}
if (only !== 'unit') {
  let db;
  runners.push({
    name: 'playwright',
    command: bin('playwright'),
    args: ['test', ...passthrough],
    cwd: root,
    env: { CHROMIUM_PATH: chromium, NEXT_TELEMETRY_DISABLED: '1' },
    before: async () => {
      db = await createDatabase(adminUrl, 'queen_e2e');
      return { E2E_DATABASE_URL: db.url, ...(await e2ePorts()) };
    },
    after: async () => {
      if (db) await dropDatabase(adminUrl, db.name);
    },
  });
}
let outcome;
try {
  outcome = await runAll(runners);
} finally {
  await embedded?.stop();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
console.log(outcome.summary);
process.exit(outcome.failed.length ? 1 : 0);
