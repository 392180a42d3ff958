// Every answer a clear error (issue 21): 4xx for paths that cannot be decoded (pages, API, OPTIONS),
// X-Request-Id on every answer, a JSON 404 for an unknown API path, a 4xx log line that says why
// with the client's address and agent, no query parameters in logs, and JSON-only stdout.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../db/embedded.mjs';
import { startApp, type TestApp } from './support/app';
import { testDatabase } from './support/db';
import { waitForHealth } from './support/server';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with the path exactly as written (fetch would normalize some). */
function send(
  url: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: rawPath, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const lines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));

describe('errors that say why', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ DB_STATEMENT_TIMEOUT_MS: '1000', LOG_PRETTY: 'false' });
    await app.api.push([{ queue: 'errs.q', payload: 1 }]);
  });
  afterAll(() => app.stop());

  const BAD = ['%FF', '%00', '%ED%A0%80', 'a%C3'];

  it('pages and API answer 400 for a path segment that is not UTF-8, holds U+0000 or a lone surrogate (OPTIONS too)', async () => {
    const tried: string[] = [];
    for (const seg of BAD) {
      for (const [method, p] of [
        ['GET', `/queues/${seg}`],
        ['GET', `/leases/${seg}`],
        ['GET', `/${seg}`],
        ['GET', `/api/v1/resources/queues/${seg}`],
        ['OPTIONS', `/api/v1/resources/queues/${seg}`],
        ['OPTIONS', `/queues/${seg}`],
        ['DELETE', `/api/v1/resources/queues/${seg}`],
        ['GET', `/api/v1/nope/${seg}`],
      ]) {
        const r = await send(app.server.url, method, p);
        tried.push(`${method} ${p} → ${r.status}`);
        expect(r.status, `${method} ${p}`).toBe(400);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(r.body).error).toMatch(/percent-encoding|U\+0000/);
        expect(r.headers['x-request-id']).toBeTruthy();
      }
    }
    expect(tried.length).toBe(BAD.length * 8);
  });

  it('an unknown /api path is a JSON 404 in the error envelope, and every answer carries X-Request-Id', async () => {
    const unknown = await send(app.server.url, 'GET', '/api/v1/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(JSON.parse(unknown.body))).toEqual(['error']);
    for (const [method, p, status] of [
      ['GET', '/api/v1/no-such-thing', 404],
      ['POST', '/health', 405],
      ['GET', '/queues/%FF', 400],
      ['GET', '/no-such-page', 404],
      ['GET', '/', 200],
      ['GET', '/health', 200],
      ['GET', '/api/v1/resources/queues/errs.q', 200],
    ] as const) {
      const r = await send(app.server.url, method, p);
      expect(r.status, `${method} ${p}`).toBe(status);
      expect(r.headers['x-request-id'], `${method} ${p}`).toMatch(/^[\w-]{8,}$/);
    }
    const mine = await send(app.server.url, 'POST', '/health', { 'x-request-id': 'trace-42' });
    expect(mine.headers['x-request-id']).toBe('trace-42');
    expect(JSON.parse(mine.body).error).toMatch(/^method not allowed/);
  });

  it("a 4xx log line says why, with the client's address and user agent", async () => {
    const r = await send(
      app.server.url,
      'POST',
      '/api/v1/push',
      { 'content-type': 'application/json', 'user-agent': 'queen-test/1.0', 'x-request-id': 'why-400' },
      '{"items":"not a list"}',
    );
    expect(r.status).toBe(400);
    const reason = JSON.parse(r.body).error;
    await new Promise((res) => setTimeout(res, 300)); // the log is written asynchronously
    const line = lines(app.server.output()).find((l) => l.requestId === 'why-400');
    expect(line).toMatchObject({
      status: 400,
      error: reason,
      client: '127.0.0.1',
      userAgent: 'queen-test/1.0',
      route: '/api/v1/push',
    });
    const bad = await send(app.server.url, 'GET', '/queues/%FF', {
      'x-request-id': 'why-bad-path',
      'user-agent': 'queen-test/1.0',
    });
    expect(bad.status).toBe(400);
    await new Promise((res) => setTimeout(res, 300));
    expect(lines(app.server.output()).find((l) => l.requestId === 'why-bad-path')).toMatchObject({
      status: 400,
      error: expect.stringMatching(/percent-encoding/),
      client: '127.0.0.1',
      userAgent: 'queen-test/1.0',
    });
  });

  it("a page's database error is logged without the query's parameters", async () => {
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    const secret = 'errs.secret-name-7f3a';
    await app.api.push([{ queue: secret, payload: 1 }]);
    await locker.query('begin');
    await locker.query('lock table queen.queues in access exclusive mode');
    try {
      const page = await send(app.server.url, 'GET', `/queues/${secret}`);
      expect(page.status).toBeGreaterThanOrEqual(500);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    await new Promise((res) => setTimeout(res, 500));
    const out = app.server.output();
    expect(out).toMatch(/statement timeout|Failed query/);
    expect(out).not.toContain(secret);
  });
});

describe('stdout with LOG_PRETTY=false', () => {
  it('npm start writes JSON lines only (its own lines included)', async () => {
    const db = await testDatabase();
    const port = await freePort();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: path.join(__dirname, '..'),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_PRETTY: 'false',
        NEXT_TELEMETRY_DISABLED: '1',
      },
    });
    let stdout = '';
    let all = '';
    child.stdout!.on('data', (d) => ((stdout += d), (all += d)));
    child.stderr!.on('data', (d) => (all += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await waitForHealth(`http://127.0.0.1:${port}`, child, () => all);
      await fetch(`http://127.0.0.1:${port}/api/v1/nope`);
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      await db.drop();
    }
    const notJson = stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .filter((l) => {
        try {
          return typeof JSON.parse(l) !== 'object';
        } catch {
          return true;
        }
      });
    expect(notJson).toEqual([]);
    expect(stdout).toContain('"component":"start"');
  }, 120_000);
});
