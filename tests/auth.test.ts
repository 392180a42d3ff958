// Auth on: producerSub and the audit actor come from the token, the dashboard's session cookie,
// and a JWKS whose keys rotate.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config.mjs';
import { startApp, type TestApp } from './support/app';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, keyPair, mint } from './support/tokens';

const ENV = { JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE };

describe('auth on: who did it comes from the token', () => {
  let app: TestApp;
  let writer: Record<string, string>;
  let admin: Record<string, string>;
  beforeAll(async () => {
    app = await startApp(ENV);
    writer = {
      'content-type': 'application/json',
      ...bearer(await mint(hs256(), { sub: 'svc-orders', role: 'read-write' })),
    };
    admin = { 'content-type': 'application/json', ...bearer(await mint(hs256(), { sub: 'alice@ops', role: 'admin' })) };
  });
  afterAll(() => app.stop());

  it('stamps producerSub from the token on push and transaction, never from the body', async () => {
    const push = await app.api.post(
      '/api/v1/push',
      { items: [{ queue: 'auth.sub', partition: 'p', payload: 1, producerSub: 'spoofed', transactionId: 'a' }] },
      { headers: writer },
    );
    expect(push.status).toBe(201);
    const tx = await app.api.post(
      '/api/v1/transaction',
      {
        operations: [
          {
            type: 'push',
            items: [{ queue: 'auth.sub', partition: 'p', payload: 2, producerSub: 'spoofed', transactionId: 'b' }],
          },
        ],
      },
      { headers: writer },
    );
    expect(tx.body.success).toBe(true);
    const popped = await app.api.get('/api/v1/pop/queue/auth.sub?batch=10&wait=false', { headers: writer });
    expect(popped.status).toBe(200);
    expect(popped.body.messages.map((m: { producerSub: string }) => m.producerSub)).toEqual([
      'svc-orders',
      'svc-orders',
    ]);
    const rows = await app.db.query(`select producer_sub from queen.messages order by segment_offset`);
    expect(rows.map((r) => r.producer_sub)).toEqual(['svc-orders', 'svc-orders']);
  });

  it('records the token subject as the audit actor, whatever X-Queen-Actor says', async () => {
    const res = await app.api.post(
      '/api/v1/system/maintenance/pop',
      { enabled: true, reason: 'drill' },
      { headers: { ...admin, 'x-queen-actor': 'mallory' } },
    );
    expect(res.status).toBe(200);
    await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'drill over' }, { headers: admin });
    const audit = await app.db.query(`select actor, reason from queen.audit_log order by id`);
    expect(audit).toEqual([
      { actor: 'alice@ops', reason: 'drill' },
      { actor: 'alice@ops', reason: 'drill over' },
    ]);
  });

  it('signs the dashboard in with an HttpOnly SameSite=Strict cookie and out again', async () => {
    const token = await mint(hs256(), { sub: 'bob', role: 'read-only' });
    const signIn = await app.api.post('/api/auth/session', { token });
    expect(signIn.status).toBe(200);
    expect(signIn.body).toMatchObject({ authEnabled: true, signedIn: true, subject: 'bob', role: 'read-only' });
    const cookie = signIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^queen_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const session = cookie.split(';')[0];
    expect((await app.api.get('/api/v1/leases', { headers: { cookie: session } })).status).toBe(200);
    expect(
      (await app.api.post('/api/v1/system/maintenance/pop', { enabled: true }, { headers: { cookie: session } }))
        .status,
    ).toBe(403);
    expect((await app.api.get('/api/auth/session', { headers: { cookie: session } })).body.subject).toBe('bob');
    const out = await app.api.request('DELETE', '/api/auth/session', undefined, { headers: { cookie: session } });
    expect(out.headers.get('set-cookie')).toMatch(/^queen_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    // behind a TLS proxy the cookie is Secure
    const tls = await app.api.post('/api/auth/session', { token }, { headers: { 'x-forwarded-proto': 'https' } });
    expect(tls.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('refuses a sign-in with a bad token, or one without a role, and sets no cookie', async () => {
    for (const [token, status, error] of [
      ['nonsense', 400, /token: is not a JWT/],
      [await mint(hs256(), { role: 'admin', expiresIn: -100 }), 401, /token expired/],
      [await mint(hs256(), { role: 'guest' }), 403, /has no role/],
    ] as const) {
      const res = await app.api.post('/api/auth/session', { token });
      expect(res.status).toBe(status);
      expect(res.body.error).toMatch(error);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('sends a signed-out browser from a page to /sign-in, and lets a signed-in one through', async () => {
    const page = await fetch(`${app.server.url}/leases?state=live`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/sign-in?next=%2Fleases%3Fstate%3Dlive');
    const token = await mint(hs256(), { sub: 'bob', role: 'read-only' });
    const signedIn = await fetch(`${app.server.url}/leases`, {
      headers: { cookie: `queen_session=${token}` },
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(200);
    // the page's data travels in RSC requests too: they are guarded the same way
    const rsc = await fetch(`${app.server.url}/leases`, {
      headers: { rsc: '1', 'next-router-prefetch': '1' },
      redirect: 'manual',
    });
    expect(rsc.status).toBe(303);
  });
});

describe('auth with a JWKS endpoint', () => {
  it('accepts the keys it publishes and follows a rotation', async () => {
    const k1 = await keyPair('RS256', 'k1');
    const k2 = await keyPair('ES256', 'k2');
    let published = [k1.jwk];
    let fetches = 0;
    const jwks = http.createServer((_, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const { port } = jwks.address() as { port: number };
    const app = await startApp({
      JWT_ENABLED: 'true',
      JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
      JWT_AUDIENCE: AUDIENCE,
    });
    try {
      const get = async (token: string) => (await app.api.get('/api/v1/leases', { headers: bearer(token) })).status;
      const t1 = await mint(k1.signer, { role: 'read-only' });
      expect(await get(t1)).toBe(200);
      expect(await get(t1)).toBe(200);
      expect(fetches).toBe(1); // cached
      // the identity provider rotates to k2 and retires k1
      published = [k2.jwk];
      await new Promise((r) => setTimeout(r, 5200)); // past the refetch cooldown
      const t2 = await mint(k2.signer, { role: 'read-only' });
      expect(await get(t2)).toBe(200);
      expect(fetches).toBe(2);
      const stale = await app.api.get('/api/v1/leases', {
        headers: bearer(await mint(k1.signer, { role: 'read-only' })),
      });
      expect(stale.status).toBe(401);
      expect(stale.body.error).toMatch(/no key of the JWKS matches/);
      // the endpoint down: a token needing a fetch is a 503 that says so, not a 401
      jwks.close();
      await new Promise((r) => setTimeout(r, 5200));
      const t3 = await mint((await keyPair('RS256', 'k3')).signer, { role: 'read-only' });
      const down = await app.api.get('/api/v1/leases', { headers: bearer(t3) });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
    } finally {
      await app.stop();
      jwks.close();
    }
  }, 60_000);
});

describe('auth configuration', () => {
  const load = (env: Record<string, string>) => () => loadConfig(env);
  it('refuses settings that would have no effect or cannot work', () => {
    expect(load({ JWT_ENABLED: 'yes' })).toThrow(/JWT_ENABLED: must be true or false/);
    expect(load({ JWT_SECRET: SECRET })).toThrow(/JWT_SECRET set but JWT_ENABLED is not true/);
    expect(load({ JWT_ENABLED: 'true' })).toThrow(/needs JWT_SECRET .* JWT_PUBLIC_KEY .* or JWT_JWKS_URL/);
    expect(load({ JWT_ENABLED: 'true', JWT_SECRET: 'short' })).toThrow(/at least 32 characters/);
    expect(load({ JWT_ENABLED: 'true', JWT_PUBLIC_KEY: 'nope' })).toThrow(/JWT_PUBLIC_KEY: not a PEM public key/);
    expect(load({ JWT_ENABLED: 'true', JWT_JWKS_URL: 'file:///etc/keys' })).toThrow(
      /JWT_JWKS_URL: must be an http\(s\) URL/,
    );
  });

  it('accepts a PEM given on one line with \\n escapes', async () => {
    const { pem } = await keyPair('ES256');
    const config = loadConfig({ JWT_ENABLED: 'true', JWT_PUBLIC_KEY: pem.replace(/\n/g, '\\n') });
    expect(config.auth.publicKeyAlgorithm).toBe('ES256');
  });
});
