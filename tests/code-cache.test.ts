// The boot's V8 code cache (scripts/lib/code-cache.mjs, docs/performance.md "Compiled once"): a
// server writes the compiled code of the modules it loaded some seconds after its boot, and the next
// boot of the same build compiles them from it (the CPU a rolling restart takes from the instances
// still serving), then serves as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';
import { startServer, type TestServer } from './support/server';

const lineOf = (output: string, msg: string) =>
  output
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l))[0];

async function until(done: () => boolean) {
  while (!done()) await new Promise((r) => setTimeout(r, 200));
}

describe('the code cache of the build', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db.drop());

  it('is written after a boot, and the next boot compiles its modules from it and serves alike', async () => {
    const env = { LOG_LEVEL: 'debug', LOG_PRETTY: 'false' };
    let server: TestServer | undefined = await startServer(db.url, env);
    try {
      const first = server;
      await until(() => lineOf(first.output(), 'modules compiled at boot') !== undefined);
      // a cache another test's server left complete needs no write
      if (lineOf(first.output(), 'modules compiled at boot').compiled > 0)
        await until(() => lineOf(first.output(), 'code cache written') !== undefined);
      await first.stop();

      server = await startServer(db.url, env);
      const second = server;
      await until(() => lineOf(second.output(), 'modules compiled at boot') !== undefined);
      const boot = lineOf(second.output(), 'modules compiled at boot');
      expect(boot.fromCache, second.output()).toBeGreaterThan(100);
      expect(boot.compiled, second.output()).toBe(0);

      expect((await fetch(`${second.url}/ready`)).status).toBe(200);
      const push = await fetch(`${second.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ queue: 'code-cache.q', payload: { n: 1 } }] }),
      });
      expect(push.status).toBe(201);
      const pop = await fetch(`${second.url}/api/v1/pop/queue/code-cache.q?wait=false`);
      expect(pop.status).toBe(200);
      expect((await pop.json()).messages[0].data).toEqual({ n: 1 });
      // the answers that refuse, and a page of the dashboard
      const bad = await fetch(`${second.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      });
      expect(bad.status).toBe(400);
      const page = await fetch(`${second.url}/`);
      expect(page.status).toBe(200);
    } finally {
      await server?.stop();
    }
  }, 120_000);
});
