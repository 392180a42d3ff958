// How the server process ends. `npm start` runs the server in its own process (scripts/start.mjs
// imports scripts/serve.mjs), so what start.mjs started before it (the embedded PostgreSQL) must be
// stopped by whichever path ends the process: the graceful stop, a second signal, a listen error.
import { flushLog } from '../../lib/log.mjs';

/** @type {(() => Promise<unknown>)[]} */
const hooks = [];

/** Runs `fn` (awaited) before the process exits by `exit()`, after the server's own shutdown. */
export function beforeExit(fn) {
  hooks.push(fn);
}

/**
 * Runs the hooks in the reverse order of their registration, flushes the log and exits with `code`.
 * @param {number} code
 */
export async function exit(code) {
  for (const fn of hooks.splice(0).reverse()) {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`[exit] ${err?.message ?? err}\n`);
    }
  }
  await flushLog();
  process.exit(code);
}
