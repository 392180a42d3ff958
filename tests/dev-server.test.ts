// `npm run dev` (scripts/start.mjs --dev → scripts/serve.mjs --dev) against `npm start`: the same
// server around Next's dev mode, so the API answers as in production: boot before the first request
// (migrations applied on an empty database), the API's headers, serve.mjs's own early answers.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';
import { startServer, type TestServer } from './support/server';

let db: TestDatabase;
let dev: TestServer;

beforeAll(async () => {
  db = await testDatabase({ migrated: false });
  dev = await startServer(db.url, { LOG_LEVEL: 'warn' }, ['--dev']);
}, 120_000);
afterAll(async () => {
  await dev?.stop();
  await db?.drop();
});

describe('the dev server', () => {
  it('has booted before it answers: an empty database is migrated, /ready is 200', async () => {
    const res = await fetch(`${dev.url}/ready`);
    expect(res.status).toBe(200);
    const [{ count }] = await db.query<{ count: number }>(`select count(*)::int as count from queen.migrations`);
    expect(count).toBeGreaterThan(0);
    // and it is Next's dev server answering: its router's Vary, its request lines
    expect(res.headers.get('vary')).toMatch(/rsc/);
    // Next writes its request line once the answer is sent: it may reach stdout after the client has it
    await vi.waitFor(() => expect(dev.output()).toMatch(/GET \/ready 200 in/), { timeout: 10_000 });
  }, 60_000);

  it('answers the API as the production server does', async () => {
    const push = await fetch(`${dev.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ queue: 'dev.q', payload: { n: 1 }, transactionId: 'd1' }] }),
    });
    expect(push.status).toBe(201);
    expect(push.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(push.headers.get('x-content-type-options')).toBe('nosniff');
    expect(push.headers.get('x-request-id')).toBeTruthy();
    const [result] = await push.json();
    expect(result).toMatchObject({ index: 0, transaction_id: 'd1', status: 'queued' });
    // serve.mjs's own answers, which Next alone gives otherwise (a 500 for undecodable bytes)
    const bad = await fetch(`${dev.url}/api/v1/resources/queues/%ff`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'malformed percent-encoding in the path' });
    const wrong = await fetch(`${dev.url}/api/v1/push`, { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  }, 60_000);
});
