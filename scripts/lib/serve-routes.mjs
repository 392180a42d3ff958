// The route table scripts/serve.mjs answers with, by mode:
//   production (npm start, the tests, the bench): the build's compiled handlers, called directly
//     (the fast path), once checkBuild's view of Next's internals holds (scripts/lib/routes.mjs);
//   SERVE_FAST_PATH=false, or `npm run dev`: the route files of app/, every request for them
//     through Next's own handler, with the same headers and early answers (405, 400) around it.
import path from 'node:path';
import { flushLog, log } from '../../lib/log.mjs';
import { NextContractError, VERIFIED_NEXT, loadBuiltRoutes, matchRoute, nextVersion, sourceRoutes } from './routes.mjs';

/**
 * @param {{ root: string, dev: boolean, fastPath: boolean }} options
 * @returns {Promise<{ routes: { segments: string[], handlers: Record<string, unknown> }[], match: (pathname: string) => ReturnType<typeof matchRoute>, fastPath: boolean }>}
 */
export async function serveRoutes({ root, dev, fastPath }) {
  const direct = fastPath && !dev;
  let routes;
  if (direct) {
    try {
      routes = await loadBuiltRoutes(path.join(root, '.next'));
    } catch (err) {
      if (!(err instanceof NextContractError)) throw err;
      log('serve').fatal(
        { next: nextVersion(), verified: VERIFIED_NEXT, problems: err.problems },
        'Next.js internals differ',
      );
      process.stderr.write(`[serve] ${err.message}\n`);
      await flushLog();
      process.exit(1);
    }
    if (nextVersion() !== VERIFIED_NEXT) {
      log('serve').warn(
        { next: nextVersion(), verified: VERIFIED_NEXT },
        'the fast path was verified with another Next.js: run tests/serve-contract.test.ts',
      );
    }
  } else {
    routes = sourceRoutes(path.join(root, 'app'));
  }
  return { routes, match: (pathname) => matchRoute(routes, pathname), fastPath: direct };
}
