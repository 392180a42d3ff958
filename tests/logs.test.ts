// The server's log: one JSON line per request on stdout, carrying the request id it echoes in
// X-Request-Id, the route pattern and never the query or a payload; a failed statement logs at
// error level with its cause; a bad LOG_LEVEL stops the start.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';
import { testDatabase } from './support/db';
import { startServer } from './support/server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request logs', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ DB_STATEMENT_TIMEOUT_MS: '1000', LOG_LEVEL: 'info', LOG_PRETTY: 'false' });
  });
  afterAll(() => app.stop());

  /** Every line the server wrote so far, each of which must be JSON. */
  const lines = () =>
    app.server
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          throw new Error(`not a JSON line: ${l}`);
        }
      });

  /** The lines of one request id, once the asynchronous log writes have landed. */
  async function linesOf(requestId: string, expected = 1) {
    for (let i = 0; i < 50; i++) {
      const found = lines().filter((l) => l.requestId === requestId);
      if (found.length >= expected) return found;
      await sleep(20);
    }
    return lines().filter((l) => l.requestId === requestId);
  }

  it('writes one JSON line per request with the id it was given, the route pattern and no query', async () => {
    await pushMany(app.api, 'logs.q', 'p0', 1);
    const res = await app.api.get('/api/v1/resources/queues/logs.q?secretParam=hunter2', {
      headers: { 'x-request-id': 'req-logs-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-logs-1');
    const found = await linesOf('req-logs-1');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      route: '/api/v1/resources/queues/[queue]',
      method: 'GET',
      status: 200,
      component: 'http',
    });
    expect(typeof found[0].ms).toBe('number');
    expect(typeof found[0].time).toBe('string');
    expect(app.server.output()).not.toMatch(/hunter2|logs\.q\?/);
  });

  it('makes an id when none or an insane one is given, and names the consumer', async () => {
    const plain = await app.api.get('/health');
    expect(plain.headers.get('x-request-id')).toMatch(UUID);
    expect(await linesOf(plain.headers.get('x-request-id')!)).toHaveLength(1);

    const insane = await app.api.get('/health', { headers: { 'x-request-id': `bad id ${'x'.repeat(300)}` } });
    expect(insane.headers.get('x-request-id')).toMatch(UUID);

    const popped = await popQueue(
      app.api,
      'logs.q',
      { consumerGroup: 'g', wait: false },
      { headers: { 'x-queen-consumer': 'worker-7', 'x-request-id': 'req-pop-1' } },
    );
    expect(popped.status).toBe(200);
    const [line] = await linesOf('req-pop-1');
    expect(line).toMatchObject({ route: '/api/v1/pop/queue/[queue]', consumer: 'worker-7', status: 200 });
  });

  it('logs a failed statement at error level with its cause, and never the payload', async () => {
    const lock = await app.db.pool.connect();
    try {
      await lock.query('begin');
      await lock.query('lock table queen.queues in access exclusive mode');
      const listed = await app.api.get('/api/v1/resources/queues', { headers: { 'x-request-id': 'req-err-1' } });
      expect(listed.status).toBe(500);
      const pushed = await app.api.request(
        'POST',
        '/api/v1/push',
        { items: [{ queue: 'logs.q', partition: 'p0', payload: { card: 'payload-s3cret' } }] },
        { headers: { 'x-request-id': 'req-err-2' } },
      );
      expect(pushed.status).toBe(500);
    } finally {
      await lock.query('rollback');
      lock.release();
    }
    const [listed] = await linesOf('req-err-1');
    expect(listed).toMatchObject({
      level: 'error',
      msg: 'request failed',
      route: '/api/v1/resources/queues',
      status: 500,
      code: '57014',
      kind: 'statement cancelled',
    });
    expect(listed.err).toMatch(/statement timeout/);
    const [pushed] = await linesOf('req-err-2');
    expect(pushed).toMatchObject({ level: 'error', route: '/api/v1/push', status: 500, code: '57014' });
    expect(app.server.output()).not.toContain('payload-s3cret');
  });

  it('leaves no console output: every line is JSON', () => {
    expect(() => lines()).not.toThrow();
    expect(lines().some((l) => l.component === 'serve' && l.msg === 'broker and dashboard listening')).toBe(true);
  });
});

describe('LOG_LEVEL', () => {
  it('refuses a bad value at boot, naming it', async () => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'scripts', 'serve.mjs')], {
      env: { ...process.env, LOG_LEVEL: 'loud', PORT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    const line = JSON.parse(output.trim().split('\n').pop()!);
    expect(line).toMatchObject({ level: 'fatal', msg: 'invalid configuration' });
    expect(line.err).toMatch(/LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent/);
  });
});

describe('a PostgreSQL that does not vacuum', () => {
  it("is named at boot: autovacuum off on the server, or for the broker's tables", async () => {
    const db = await testDatabase();
    try {
      const vacuumWarnings = async () => {
        const server = await startServer(db.url, { LOG_PRETTY: 'false' });
        await server.stop();
        return server
          .output()
          .split('\n')
          .filter((l) => l.includes('"level":"warn"') && l.includes('autovacuum'));
      };
      const [{ on }] = await db.query<{ on: boolean }>(
        `select current_setting('autovacuum')::boolean and current_setting('track_counts')::boolean as on`,
      );
      await db.query('alter table queen.cursors set (autovacuum_enabled = false)');
      await db.query('alter table queen.backlog set (autovacuum_enabled = f)'); // kept as written
      const off = await vacuumWarnings();
      expect(off.filter((l) => l.includes('"tables":["backlog","cursors"]'))).toHaveLength(1);
      // this machine's PostgreSQL has it off server-wide (conf.d/90-ci.conf); embedded ones have it on
      expect(off.filter((l) => l.includes('"autovacuum":"off"'))).toHaveLength(on ? 0 : 1);
      await db.query('alter table queen.cursors reset (autovacuum_enabled)');
      await db.query('alter table queen.backlog reset (autovacuum_enabled)');
      expect(await vacuumWarnings()).toHaveLength(on ? 0 : 1);
    } finally {
      await db.drop();
    }
  }, 120_000);
});
