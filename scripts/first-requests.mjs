// The first requests a freshly started server answers, with and without its warm connections
// (docs/performance.md, "Warm connections and a boot that yields"): boots `scripts/serve.mjs` (the build as it is) on a
// free port, once with DB_POOL_WARM=0 and once with the default, alternately, `ROUNDS` times each,
// and prints each boot's first 8 pushes, 8 pops (one after another) and 3 rounds of 4 pushes at once,
// in ms from the request sent to its answer read. A measuring tool:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ROUNDS=3 node scripts/first-requests.mjs
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../db/embedded.mjs';
import { waitHealthy } from './lib/bench-compare.mjs';

const root = path.join(import.meta.dirname, '..');
const rounds = Number(process.env.ROUNDS ?? 3);
const queue = `first-requests.${process.pid}`;

async function boot(env) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'serve.mjs')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function timed(url, init) {
  const started = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  if (res.status >= 300 && res.status !== 204) throw new Error(`${url}: ${res.status}`);
  return Math.round(performance.now() - started);
}

const push = (url, i) =>
  timed(`${url}/api/v1/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ queue, partition: `p${i % 8}`, payload: { i } }] }),
  });
const pop = (url, i) => timed(`${url}/api/v1/pop/queue/${queue}/partition/p${i % 8}?autoAck=true&batch=1`);

// the queue exists before the first boot measured: on a database with no queue, nothing is warmed
const first = await boot({});
try {
  await push(first.url, 0);
} finally {
  await first.stop();
}

for (let round = 1; round <= rounds; round++) {
  for (const [label, env] of [
    ['DB_POOL_WARM=0', { DB_POOL_WARM: '0' }],
    ['default', {}],
  ]) {
    const server = await boot(env);
    try {
      const pushes = [];
      for (let i = 0; i < 8; i++) pushes.push(await push(server.url, i));
      const pops = [];
      for (let i = 0; i < 8; i++) pops.push(await pop(server.url, i));
      const together = [];
      for (let r = 0; r < 3; r++)
        together.push(Math.max(...(await Promise.all([0, 1, 2, 3].map((i) => push(server.url, i))))));
      console.log(
        `round ${round} ${label.padEnd(14)} pushes ${pushes.join(' ')} | pops ${pops.join(' ')} | slowest of 4 at once ${together.join(' ')}`,
      );
    } finally {
      await server.stop();
    }
  }
}
