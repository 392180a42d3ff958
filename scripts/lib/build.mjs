// Builds the Next.js app when the build is missing or older than any source file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..', '..');
const SOURCES = [
  'app',
  'components',
  'db',
  'lib',
  'sql',
  'instrumentation.ts',
  'next.config.js',
  'package.json',
  'postcss.config.mjs',
  'tsconfig.json',
];

function newestMtime(p) {
  if (!fs.existsSync(p)) return 0;
  const stat = fs.statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(p).reduce((m, f) => Math.max(m, newestMtime(path.join(p, f))), stat.mtimeMs);
}

export function buildIsStale() {
  const buildId = path.join(root, '.next', 'BUILD_ID');
  if (!fs.existsSync(buildId)) return true;
  const built = fs.statSync(buildId).mtimeMs;
  return SOURCES.some((s) => newestMtime(path.join(root, s)) > built);
}

/** `toStderr`: Next's build output goes to stderr, keeping stdout for the server's JSON lines (npm start). */
export function buildIfStale({ toStderr = false } = {}) {
  if (!buildIsStale()) return;
  (toStderr ? console.error : console.log)('[build] building the app (next build) ...');
  execFileSync(path.join(root, 'node_modules', '.bin', 'next'), ['build'], {
    cwd: root,
    stdio: toStderr ? ['ignore', 2, 2] : 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
}
