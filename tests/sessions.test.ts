// Sessions that end (issue 21): the live event stream closes when its token expires and when its
// session signs out; tokens without exp are refused unless JWT_ALLOW_NO_EXP=true; with auth on a
// lease records the token's subject next to the holder name the consumer gives.
import http from 'node:http';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config.mjs';
import { startApp, type TestApp } from './support/app';
import { startServer, type TestServer } from './support/server';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, mint } from './support/tokens';

/** Opens the event stream and resolves with every event once the server ends it. */
function streamUntilEnd(url: string, headers: Record<string, string>, onOpen?: () => void) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; events: any[] }>((resolve, reject) => {
    const req = http.get({ host: hostname, port, path: '/api/v1/events', headers }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
        if (text.includes('"type":"hello"')) onOpen?.();
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          events: text
            .split('\n\n')
            .filter((b) => b.startsWith('data: '))
            .map((b) => JSON.parse(b.slice(6))),
        }),
      );
    });
    req.on('error', reject);
  });
}

const noExp = (sub: string) =>
  new SignJWT({ role: 'admin' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .sign(hs256().key);

describe('sessions that end', () => {
  let app: TestApp;
  let lenient: TestServer;
  const auth = {
    JWT_ENABLED: 'true',
    JWT_SECRET: SECRET,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    JWT_CLOCK_TOLERANCE_SECONDS: '0',
  };
  beforeAll(async () => {
    app = await startApp(auth);
    lenient = await startServer(app.db.url, { ...auth, JWT_ALLOW_NO_EXP: 'true' });
  });
  afterAll(async () => {
    await lenient.stop();
    await app.stop();
  });

  it('the live stream ends when its token expires, with a last session-ended event', async () => {
    const token = await mint(hs256(), { sub: 'short', role: 'read-only', expiresIn: 3 });
    const { status, events } = await streamUntilEnd(app.server.url, bearer(token));
    expect(status).toBe(200);
    expect(events[0].type).toBe('hello');
    expect(events.at(-1)).toMatchObject({ type: 'session-ended', reason: 'expired' });
    // and a reconnect with it is refused, which stops a browser's EventSource
    expect((await fetch(`${app.server.url}/api/v1/events`, { headers: bearer(token) })).status).toBe(401);
  }, 30_000);

  it('the live stream ends when its session signs out', async () => {
    const token = await mint(hs256(), { sub: 'viewer', role: 'read-only', expiresIn: 3600 });
    const cookie = { cookie: `queen_session=${token}` };
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const stream = streamUntilEnd(app.server.url, cookie, () => opened());
    await open;
    const out = await fetch(`${app.server.url}/api/auth/session`, {
      method: 'DELETE',
      headers: { ...cookie, origin: app.server.url },
    });
    expect(out.status).toBe(200);
    const { events } = await stream;
    expect(events.at(-1)).toMatchObject({ type: 'session-ended', reason: 'signed-out' });
  }, 30_000);

  it('refuses a token without exp, unless JWT_ALLOW_NO_EXP=true', async () => {
    const token = await noExp('forever');
    const refused = await fetch(`${app.server.url}/api/v1/resources/queues`, { headers: bearer(token) });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe(
      'the token has no exp claim: tokens that never expire are refused (JWT_ALLOW_NO_EXP=true allows them)',
    );
    const signIn = await fetch(`${app.server.url}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(signIn.status).toBe(401);
    expect((await fetch(`${lenient.url}/api/v1/resources/queues`, { headers: bearer(token) })).status).toBe(200);
    expect(() => loadConfig({ JWT_ALLOW_NO_EXP: 'true' })).toThrow(/JWT_ALLOW_NO_EXP set but JWT_ENABLED is not true/);
    expect(() => loadConfig({ JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_ALLOW_NO_EXP: 'yes' })).toThrow(
      /JWT_ALLOW_NO_EXP: must be true or false/,
    );
  });

  it("a lease records the token's subject next to the holder the consumer names, on a pop and on a parked pop", async () => {
    const writer = {
      ...bearer(await mint(hs256(), { sub: 'svc-orders', role: 'read-write' })),
      'content-type': 'application/json',
    };
    const admin = bearer(await mint(hs256(), { sub: 'alice', role: 'admin' }));
    const push = (queue: string) =>
      fetch(`${app.server.url}/api/v1/push`, {
        method: 'POST',
        headers: writer,
        body: JSON.stringify({ items: [{ queue, payload: 1 }] }),
      });
    expect((await push('subj.now')).status).toBe(201);
    const now = await fetch(`${app.server.url}/api/v1/pop/queue/subj.now?wait=false`, {
      headers: { ...writer, 'x-queen-consumer': 'worker-7' },
    });
    expect(now.status).toBe(200);
    // parked first, served by the claim of parked pops
    const parked = fetch(`${app.server.url}/api/v1/pop/queue/subj.parked?wait=true&timeout=20000`, {
      headers: { ...writer, 'x-queen-consumer': 'worker-8' },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect((await push('subj.parked')).status).toBe(201);
    expect((await parked).status).toBe(200);
    const leases = (await (await fetch(`${app.server.url}/api/v1/leases`, { headers: admin })).json()).leases;
    const of = (queue: string) =>
      leases.filter((l: any) => l.queue === queue).map((l: any) => ({ holder: l.holder, subject: l.subject }));
    expect(of('subj.now')).toEqual([{ holder: 'worker-7', subject: 'svc-orders' }]);
    expect(of('subj.parked')).toEqual([{ holder: 'worker-8', subject: 'svc-orders' }]);
  });

  it("keeps queen.pop's 14-argument form of 0.1.0 working, without a subject", async () => {
    await app.db.query(
      `select * from queen.push('[{"queue":"subj.old","partition":"Default","payload":1,"transactionId":"o1","messageId":"01a2291d-98d7-78cc-b1bd-7f3819ba7726"}]'::jsonb)`,
    );
    const rows = await app.db.query(
      `select * from queen.pop('subj.old', null, '', '', 'g', 1, 1, false, 0, queen.uuidv7(), 'all', null, 'old-instance', false)`,
    );
    expect(rows).toHaveLength(1);
    const [c] =
      await app.db.query(`select c.lease_holder, s.subject from queen.cursors c join queen.partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id
      left join queen.lease_subjects s on s.partition_id = c.partition_id and s.consumer_group = c.consumer_group and s.lease_id = c.lease_id
      where q.name = 'subj.old'`);
    expect(c).toEqual({ lease_holder: 'old-instance', subject: null });
  });
});
