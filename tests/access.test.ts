// The access table (lib/http/access.ts) against the app: every route file has an entry and every
// entry a route; then every route × every kind of caller, over HTTP, with HS256 and RS256 tokens.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allows, ROLES, type Level, type Role } from '@/lib/http/access';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, keyPair, mint, type Signer } from './support/tokens';

const root = path.join(__dirname, '..');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** `METHOD /pattern` for every handler a route file of app/ exports, with its file. */
function handlersOfTheApp(): { key: string; file: string }[] {
  const found: { key: string; file: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'route.ts') {
        const pattern =
          '/' +
          path
            .relative(path.join(root, 'app'), dir)
            .split(path.sep)
            .filter((s) => !/^\(.*\)$/.test(s))
            .join('/');
        const source = fs.readFileSync(full, 'utf8');
        for (const m of METHODS) {
          if (new RegExp(`export\\s+(const|(async\\s+)?function)\\s+${m}\\b`).test(source))
            found.push({ key: `${m} ${pattern}`, file: full });
        }
      }
    }
  };
  walk(path.join(root, 'app'));
  return found;
}

describe('the access table', () => {
  it('has exactly one entry per route handler of the app', () => {
    expect(Object.keys(ACCESS).sort()).toEqual(
      handlersOfTheApp()
        .map((h) => h.key)
        .sort(),
    );
  });

  it('guards every handler with route() (popRoute builds on it), the wrapper that reads the table', () => {
    for (const { key, file } of handlersOfTheApp()) {
      expect(fs.readFileSync(file, 'utf8'), key).toMatch(
        new RegExp(`export const ${key.split(' ')[0]} = (route|popRoute)\\(`),
      );
    }
  });
});

/** A request for a table entry, with placeholder parameters; nothing in it needs to be valid. */
function requestFor(key: string) {
  const [method, pattern] = key.split(' ');
  const values: Record<string, string> = {
    queue: 'access.q',
    partition: 'p',
    group: 'g',
    transactionId: 't',
    partitionId: randomUUID(),
    leaseId: randomUUID(),
  };
  let url = pattern.replace(/\[(\w+)\]/g, (_, name: string) => encodeURIComponent(values[name]));
  if (url.startsWith('/api/v1/pop')) url += url === '/api/v1/pop' ? '?namespace=access&wait=false' : '?wait=false';
  return { method, url, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' };
}

async function call(base: string, key: string, headers: Record<string, string>) {
  const { method, url, body } = requestFor(key);
  const abort = new AbortController();
  const res = await fetch(base + url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: abort.signal,
  });
  // the event stream never ends by itself: its status is all this needs
  const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await res.text();
  abort.abort();
  return { status: res.status, text, headers: res.headers };
}

type Caller = { name: string; role?: Role; token?: (s: Signer) => Promise<string> };

const CALLERS: Caller[] = [
  { name: 'no token' },
  ...ROLES.map((role) => ({ name: role, role, token: (s: Signer) => mint(s, { role }) })),
  {
    name: 'a bad signature',
    token: async (s: Signer) =>
      s.alg === 'HS256'
        ? mint(hs256('another-secret-that-is-long-enough-to-sign!'), { role: 'admin' })
        : mint((await keyPair('RS256')).signer, { role: 'admin' }),
  },
  { name: 'an expired token', token: (s: Signer) => mint(s, { role: 'admin', expiresIn: -120 }) },
  { name: 'the wrong audience', token: (s: Signer) => mint(s, { role: 'admin', aud: 'someone-else' }) },
  { name: 'the wrong issuer', token: (s: Signer) => mint(s, { role: 'admin', iss: 'https://evil.test' }) },
];

function expected(level: Level, caller: Caller): 'allowed' | 401 | 403 {
  if (level === 'public') return 'allowed';
  if (!caller.token) return 401;
  if (!caller.role) return 401; // the bad tokens all claim admin
  return allows(caller.role, level) ? 'allowed' : 403;
}

describe('every route × every caller, auth on', () => {
  let app: TestApp;
  let rsa: Awaited<ReturnType<typeof keyPair>>;
  beforeAll(async () => {
    rsa = await keyPair('RS256');
    app = await startApp({
      JWT_ENABLED: 'true',
      JWT_SECRET: SECRET,
      JWT_PUBLIC_KEY: rsa.pem,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    });
  });
  afterAll(() => app.stop());

  for (const alg of ['HS256', 'RS256'] as const) {
    it(`answers what the table says (${alg})`, async () => {
      const signer = alg === 'HS256' ? hs256() : rsa.signer;
      const wrong: string[] = [];
      for (const caller of CALLERS) {
        const headers = caller.token ? bearer(await caller.token(signer)) : {};
        for (const [key, level] of Object.entries(ACCESS)) {
          const { status, text, headers: h } = await call(app.server.url, key, headers);
          const want = expected(level, caller);
          const ok = want === 'allowed' ? status !== 401 && status !== 403 && status < 500 : status === want;
          if (!ok) wrong.push(`${key} as ${caller.name}: ${status} ${text.slice(0, 120)} (expected ${want})`);
          if (status === 401) {
            expect(JSON.parse(text).error, key).toMatch(/token|authentication|Authorization/);
            expect(h.get('www-authenticate'), key).toMatch(/^Bearer /);
          }
          if (status === 403)
            expect(JSON.parse(text).error, key).toMatch(/needs the (read-only|read-write|admin) role/);
        }
      }
      expect(wrong).toEqual([]);
    });
  }

  it('says why a token is refused', async () => {
    const get = async (headers: Record<string, string>) =>
      JSON.parse((await call(app.server.url, 'GET /api/v1/leases', headers)).text).error as string;
    expect(await get({})).toMatch(/authentication required/);
    expect(await get({ authorization: 'Basic abc' })).toMatch(/malformed Authorization header/);
    expect(await get(bearer('not-a-jwt'))).toMatch(/malformed token/);
    expect(await get(bearer(await mint(hs256(), { role: 'admin', expiresIn: -120 })))).toMatch(/token expired/);
    expect(await get(bearer(await mint(hs256(), { role: 'admin', aud: 'x' })))).toMatch(/"aud"/);
    expect(
      await get(bearer(await mint(hs256('another-secret-that-is-long-enough-to-sign!'), { role: 'admin' }))),
    ).toMatch(/signature/);
    expect(await get(bearer(await mint(hs256(), { role: 'admin', sub: '' })))).toMatch(/sub claim/);
    expect(await get(bearer(await mint((await keyPair('ES256')).signer, { role: 'admin' })))).toMatch(
      /ES256 are not accepted/,
    );
    expect(await get(bearer(await mint(hs256(), { role: 'superuser' })))).toMatch(
      /needs the read-only role; the token has no known role/,
    );
  });

  it('takes the highest known role of a roles array, within the clock skew', async () => {
    const roles = bearer(await mint(hs256(), { roles: ['viewer', 'read-only', 'admin'] }));
    expect((await call(app.server.url, 'POST /api/v1/system/maintenance/pop', roles)).status).toBe(400); // allowed: {} lacks `enabled`
    const justExpired = bearer(await mint(hs256(), { role: 'read-only', expiresIn: -10 }));
    expect((await call(app.server.url, 'GET /api/v1/leases', justExpired)).status).toBe(200);
  });

  it('keeps /health public and answers no data without a token', async () => {
    expect((await call(app.server.url, 'GET /health', {})).status).toBe(200);
    const events = await call(app.server.url, 'GET /api/v1/events', {});
    expect(events.status).toBe(401);
  });
});
