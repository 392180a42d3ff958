// The test runners of `npm test`, run one after the other: every runner asked for runs, whatever
// the one before found (a red Vitest run must not hide the browser tests), and the summary names
// each one's result.
import { spawn } from 'node:child_process';
import { freePort } from '../../db/embedded.mjs';

/**
 * @typedef {{ name: string, command: string, args: string[], env?: Record<string, string>, cwd?: string,
 *   before?: () => Promise<Record<string, string> | void>, after?: () => Promise<void> }} Runner
 */

/**
 * Runs each runner; a runner whose `before` throws counts as failed and the next still runs.
 * @param {Runner[]} runners
 * @param {{ stdio?: 'inherit' | 'ignore' | 'pipe' }} [options]
 */
export async function runAll(runners, options = {}) {
  /** @type {{ name: string, status: number }[]} */
  const results = [];
  for (const r of runners) {
    let status;
    try {
      const extra = (await r.before?.()) ?? {};
      status = await exitOf(r.command, r.args, {
        cwd: r.cwd,
        stdio: options.stdio ?? 'inherit',
        env: { ...process.env, ...r.env, ...extra },
      });
    } catch (err) {
      console.error(`[test] ${r.name}: ${err?.message ?? err}`);
      status = 1;
    } finally {
      await r.after?.();
    }
    results.push({ name: r.name, status });
  }
  const failed = results.filter((r) => r.status !== 0).map((r) => r.name);
  return { results, failed, summary: summarize(results) };
}

/**
 * Runs a command to its end, the event loop free meanwhile: this process hosts the embedded
 * PostgreSQL, whose log it must keep reading (a blocked loop stops draining the pipe, and once its
 * 64 KB fill every backend that logs waits on it, which froze whole CI runs).
 * @returns {Promise<number>} the exit status (1 when it could not start or died of a signal)
 */
function exitOf(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, options);
    child.once('error', (err) => {
      console.error(`[test] ${command}: ${err.message}`);
      resolve(1);
    });
    child.once('close', (code) => resolve(code ?? 1));
  });
}

/** `[test] vitest: FAILED (exit 1), playwright: passed`, and a second line naming the failed ones. */
export function summarize(results) {
  const lines = [
    `[test] ${results.map((r) => `${r.name}: ${r.status === 0 ? 'passed' : `FAILED (exit ${r.status})`}`).join(', ')}`,
  ];
  const failed = results.filter((r) => r.status !== 0);
  lines.push(failed.length ? `[test] failed: ${failed.map((r) => r.name).join(', ')}` : '[test] all passed');
  return lines.join('\n');
}

/**
 * The ports of the Playwright servers (auth off, auth on): E2E_PORT and the next one when set
 * (E2E_AUTH_PORT overrides the second), free ports otherwise, so that two runs never collide.
 * @param {Record<string, string | undefined>} env
 */
export async function e2ePorts(env = process.env) {
  if (env.E2E_PORT)
    return { E2E_PORT: env.E2E_PORT, E2E_AUTH_PORT: env.E2E_AUTH_PORT ?? String(Number(env.E2E_PORT) + 1) };
  const port = await freePort();
  let auth = env.E2E_AUTH_PORT ? Number(env.E2E_AUTH_PORT) : await freePort();
  while (auth === port) auth = await freePort();
  return { E2E_PORT: String(port), E2E_AUTH_PORT: String(auth) };
}
