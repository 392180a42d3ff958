// What scripts/serve.mjs knows of the app's routes, and the Next.js internals it relies on to know
// it. The fast path calls the compiled route handlers directly; to find them it reads three things
// Next.js does not document:
//   1. .next/server/app-paths-manifest.json: { "/api/v1/push/route": "app/api/v1/push/route.js", ... }
//   2. each compiled route file exports `routeModule`, whose `ensureUserland()` loads the route file's
//      module and whose `userland` is then that module (its GET, POST, ... exports)
//   3. .next/server/instrumentation.js exports `register` (instrumentation.ts, compiled)
// checkBuild() verifies all three at boot and names what differs, so that a Next.js upgrade that
// changes them stops the server instead of serving wrong answers (SERVE_FAST_PATH=false serves
// every request through Next's own handler, the documented path). tests/serve-contract.test.ts
// pins the rest: the route set, and that both paths answer alike.
//   node scripts/lib/routes.mjs [.next]  checks a build and prints its route table (JSON); exit 1 and
//                                        the differences on stderr when the internals differ
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The Next.js version serve.mjs's fast path was written and measured against. */
export const VERIFIED_NEXT = '16.4.6';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

export class NextContractError extends Error {
  /** @param {string} version @param {string[]} problems */
  constructor(version, problems) {
    super(
      `The build of Next.js ${version} differs from what scripts/serve.mjs relies on (its fast path was written against Next.js ${VERIFIED_NEXT}): ${problems.join('; ')}. ` +
        'Set SERVE_FAST_PATH=false to serve everything through Next.js itself, or adapt scripts/lib/routes.mjs.',
    );
    this.problems = problems;
  }
}

export const nextVersion = () => require('next/package.json').version;

/** `/(dashboard)/api/v1/pop/queue/[queue]/route` → ['api', 'v1', 'pop', 'queue', '[queue]'] (route groups dropped). */
export const segmentsOf = (page) =>
  page
    .replace(/\/route$/, '')
    .split('/')
    .filter((s) => s && !/^\(.*\)$/.test(s));

/** A route's folder pattern, as logs, metrics and the access table name it: /api/v1/pop/queue/[queue]. */
export const patternOf = (route) => `/${route.segments.join('/')}`;

const isCatchAll = (segments) => segments.some((s) => s.startsWith('[...') || s.startsWith('[[...'));

/** Static paths first, then fewer parameters first, as Next matches them. */
const byParams = (routes) => {
  const params = (r) => r.segments.filter((s) => s.startsWith('[')).length;
  return routes.sort((a, b) => params(a) - params(b));
};

/**
 * The app's route handlers as Next built them (`.next/server/app/**\/route.js`), each with its
 * folder's path segments and its module's exports. Throws NextContractError naming every internal
 * that is not as expected.
 * @param {string} buildDir the `.next` folder
 */
export async function loadBuiltRoutes(buildDir) {
  const problems = [];
  const server = path.join(buildDir, 'server');
  const manifestFile = path.join(server, 'app-paths-manifest.json');
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (err) {
    throw new NextContractError(nextVersion(), [
      `${path.relative(buildDir, manifestFile)} is missing or not JSON (${err.code ?? err.message})`,
    ]);
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) {
    throw new NextContractError(nextVersion(), ['app-paths-manifest.json is not an object of page → file']);
  }
  const found = [];
  for (const [page, file] of Object.entries(manifest)) {
    if (!page.endsWith('/route')) continue;
    if (typeof file !== 'string') {
      problems.push(`app-paths-manifest.json: ${page} maps to ${typeof file}, not a file name`);
      continue;
    }
    const segments = segmentsOf(page);
    if (isCatchAll(segments)) continue; // none here; Next handles them
    const handlers = await userlandOf(path.join(server, file), page, problems);
    if (handlers) found.push({ segments, handlers });
  }
  if (found.length === 0 && problems.length === 0) problems.push('app-paths-manifest.json lists no `/route` entry');
  const instrumentation = path.join(server, 'instrumentation.js');
  try {
    if (typeof require(instrumentation).register !== 'function')
      problems.push('server/instrumentation.js does not export register()');
  } catch (err) {
    problems.push(`server/instrumentation.js cannot be loaded (${err.code ?? err.message})`);
  }
  if (problems.length) throw new NextContractError(nextVersion(), problems);
  return byParams(found);
}

/** A compiled route file's handlers (its `routeModule.userland`), or undefined with the problem recorded. */
async function userlandOf(file, page, problems) {
  let mod;
  try {
    mod = require(file);
  } catch (err) {
    problems.push(`${page}: ${path.basename(file)} cannot be loaded (${err.code ?? err.message})`);
    return undefined;
  }
  const routeModule = mod?.routeModule;
  if (!routeModule || typeof routeModule !== 'object') {
    problems.push(`${page}: the compiled route exports no routeModule`);
    return undefined;
  }
  if (typeof routeModule.ensureUserland !== 'function') {
    problems.push(`${page}: routeModule.ensureUserland is not a function`);
    return undefined;
  }
  await routeModule.ensureUserland();
  const userland = routeModule.userland;
  if (!userland || typeof userland !== 'object') {
    problems.push(`${page}: routeModule.userland is not the route's module after ensureUserland()`);
    return undefined;
  }
  if (!HTTP_METHODS.some((m) => typeof userland[m] === 'function')) {
    problems.push(`${page}: routeModule.userland exports no HTTP method handler`);
    return undefined;
  }
  return userland;
}

/**
 * The route files of the app's source (`app/**\/route.ts`), each with its segments and the HTTP
 * methods it exports (read from the source text: `export const GET =` or `export async function GET`).
 * What `next dev` serves, before it has compiled anything.
 * @param {string} appDir
 */
export function sourceRoutes(appDir) {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/^route\.(ts|tsx|js|mjs)$/.test(entry.name)) {
        const text = fs.readFileSync(full, 'utf8');
        const methods = HTTP_METHODS.filter((m) =>
          new RegExp(`export\\s+(?:const|(?:async\\s+)?function)\\s+${m}\\b`).test(text),
        );
        const segments = segmentsOf(`/${path.relative(appDir, path.dirname(full)).split(path.sep).join('/')}`);
        if (!isCatchAll(segments))
          found.push({ segments, handlers: Object.fromEntries(methods.map((m) => [m, true])) });
      }
    }
  };
  walk(appDir);
  return byParams(found);
}

/** `METHOD /pattern` for every method every route exports, sorted: the shape of the access table's keys. */
export const routeKeys = (routes) =>
  routes
    .flatMap((r) =>
      Object.keys(r.handlers)
        .filter((m) => HTTP_METHODS.includes(m) && r.handlers[m])
        .map((m) => `${m} ${patternOf(r)}`),
    )
    .sort();

/** The route for a path, with its (still encoded) parameters; undefined when none matches. */
export function matchRoute(routes, pathname) {
  const parts = pathname.split('/').filter(Boolean);
  for (const route of routes) {
    if (route.segments.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const s = route.segments[i];
      if (s.startsWith('[')) params[s.slice(1, -1)] = parts[i];
      else ok = s === parts[i];
    }
    if (ok) return { route, params };
  }
  return undefined;
}

if (process.argv[1] === import.meta.filename) {
  const root = path.join(import.meta.dirname, '..', '..');
  try {
    const routes = await loadBuiltRoutes(path.resolve(process.argv[2] ?? path.join(root, '.next')));
    process.stdout.write(`${JSON.stringify({ next: nextVersion(), routes: routeKeys(routes) })}\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
