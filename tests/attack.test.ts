// Every route of the access table attacked as issue 29 found it could be: a Host header shaped to
// change the path a URL is built from (`h/health#` made every GET public), paths that normalize
// to another route (`..\..\health`, encoded slashes and dots). On the fast path and through Next's
// own handler, with auth on: every answer is the one the access table says for the route the raw
// path names, and a refused request writes nothing. Generated from the table: a new route is
// covered by itself.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, allows, type Level, type Role } from '@/lib/http/access';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { SECRET, bearer, hs256, mint } from './support/tokens';

interface Answer {
  status: number;
  body: string;
}

/** A raw request: any Host, any request target (fetch normalizes both). */
function send(base: string, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  const { hostname, port } = new URL(base);
  const body = method === 'GET' || method === 'DELETE' || method === 'HEAD' ? undefined : '{}';
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method,
        path: target,
        setHost: false,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        // the event stream never ends by itself: its status is all this needs
        if (res.headers['content-type']?.startsWith('text/event-stream')) {
          res.destroy();
          return resolve({ status: res.statusCode!, body: '' });
        }
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const TOKEN_KINDS: { name: string; role?: Role; token?: () => Promise<string> }[] = [
  { name: 'no token' },
  ...ROLES.map((role) => ({ name: role, role, token: () => mint(hs256(), { role }) })),
  {
    name: 'a bad signature',
    token: () => mint(hs256('another-secret-that-is-long-enough-to-sign!'), { role: 'admin' }),
  },
];

/** What the table says a caller gets: allowed (anything but 401/403/5xx), or the refusal. */
function expected(level: Level, role: Role | undefined, hasToken: boolean): 'allowed' | 401 | 403 {
  if (level === 'public') return 'allowed';
  if (!hasToken || role === undefined) return 401;
  return allows(role, level) ? 'allowed' : 403;
}

/** Host values that once chose another route's rule, or could: paths, fragments, queries, userinfo, backslashes, encodings, length. */
const hostileHosts = (port: string) => [
  `127.0.0.1:${port}/health#`,
  `127.0.0.1:${port}/api/auth/session#`,
  `127.0.0.1:${port}\\health#`,
  `127.0.0.1:${port}/health?`,
  `127.0.0.1:${port}?x=/health`,
  `evil@127.0.0.1:${port}`,
  `127.0.0.1:${port}%2fhealth%23`,
  `127.0.0.1:${port}/metrics/prometheus#`,
  `${'a'.repeat(4000)}.localhost:${port}`,
];

/** Paths that a URL parser reads as another route (a public one): refused before matching. */
function hostilePaths(): { method: string; target: string }[] {
  const out: { method: string; target: string }[] = [];
  for (const key of Object.keys(ACCESS)) {
    const [method, pattern] = key.split(' ');
    const segments = pattern.split('/').filter(Boolean).length;
    if (pattern.includes('[')) {
      for (const climb of ['..\\', '..%5C', '..%5c', '%2e%2e/', '.%2E/', '..%2F', '%2E%2E%2F', './../']) {
        const value = `${climb.repeat(segments)}health`;
        out.push({ method, target: pattern.replace(/\[\w+\]/, value).replace(/\[\w+\]/g, 'x') });
      }
    } else {
      out.push({ method, target: `/health/..${pattern}` });
      out.push({ method, target: `${pattern}/.` });
      out.push({ method, target: pattern.replace(/^\/(\w+)/, '/$1\\..') + '\\..' });
    }
  }
  out.push({ method: 'GET', target: 'http://127.0.0.1:1/health' });
  out.push({ method: 'DELETE', target: '/api/v1/resources/queues/..\\..\\..\\..\\health' });
  return out;
}

describe.each([
  ['the fast path', {}],
  ["Next's own handler", { SERVE_FAST_PATH: 'false' }],
])('auth on, %s: routes and access from the raw path', (_, extraEnv) => {
  let app: TestApp;
  let port: string;
  let tokens: Map<string, Record<string, string>>;
  const ids: Record<string, string> = { partitionId: '', transactionId: '', leaseId: randomUUID() };

  beforeAll(async () => {
    app = await startApp({ JWT_ENABLED: 'true', JWT_SECRET: SECRET, ...extraEnv });
    port = new URL(app.server.url).port;
    tokens = new Map();
    for (const kind of TOKEN_KINDS) tokens.set(kind.name, kind.token ? bearer(await kind.token()) : {});
    const admin = tokens.get('admin')!;
    const pushed = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify({ items: [1, 2, 3].map((n) => ({ queue: 'victim', partition: 'p', payload: { n } })) }),
    });
    expect(pushed.status).toBe(201);
    const popped = await fetch(`${app.server.url}/api/v1/pop/queue/victim?consumerGroup=g&wait=false`, {
      headers: admin,
    });
    const lease = (await popped.json()) as {
      messages: { partitionId: string; transactionId: string; leaseId: string }[];
    };
    ids.partitionId = lease.messages[0].partitionId;
    ids.transactionId = lease.messages[0].transactionId;
    ids.leaseId = lease.messages[0].leaseId;
  });
  afterAll(() => app?.stop());

  /** Every table of the broker, as text: what a refused request must leave as it was. */
  async function fingerprint(): Promise<Record<string, string>> {
    const tables = await app.db.query<{ name: string }>(`
      select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ('queen', 'queen_streams') and c.relkind in ('r', 'p')
        -- written by the process's own timers, whoever calls
        and c.relname not in ('instances', 'stats_samples', 'system_state', 'holder_clients')
      order by 1`);
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      const [row] = await app.db.query<{ h: string }>(
        `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${name} t`,
      );
      out[name] = row.h;
    }
    const [maintenance] = await app.db.query<{ v: string | null }>(
      `select value::text as v from queen.system_state where key = 'pop_maintenance'`,
    );
    out.pop_maintenance = maintenance?.v ?? '';
    return out;
  }

  const targetOf = (pattern: string) =>
    pattern.replace(/\[(\w+)\]/g, (_m, name: string) =>
      encodeURIComponent(
        ({ queue: 'victim', partition: 'p', group: 'g', queryId: randomUUID(), name: 'x' } as Record<string, string>)[
          name
        ] ??
          ids[name] ??
          'x',
      ),
    ) +
    (pattern.startsWith('/api/v1/pop') ? `${pattern === '/api/v1/pop' ? '?namespace=victim&' : '?'}wait=false` : '');

  it('answers every route × token kind × hostile Host as the table says; a refused one writes nothing', async () => {
    const wrong: string[] = [];
    const refusedCells: [string, string, Level][] = [];
    const allowedCells: [string, string, Level][] = [];
    for (const [key, level] of Object.entries(ACCESS))
      for (const kind of TOKEN_KINDS)
        (expected(level, kind.role, !!kind.token) === 'allowed' ? allowedCells : refusedCells).push([
          key,
          kind.name,
          level,
        ]);
    const before = await fingerprint();
    const check = async ([key, kindName, level]: [string, string, Level]) => {
      const kind = TOKEN_KINDS.find((k) => k.name === kindName)!;
      const [method, pattern] = key.split(' ');
      const want = expected(level, kind.role, !!kind.token);
      for (const host of hostileHosts(port)) {
        const { status, body } = await send(app.server.url, method, targetOf(pattern), {
          host,
          ...tokens.get(kindName)!,
        });
        const ok = want === 'allowed' ? status !== 401 && status !== 403 && status < 500 : status === want;
        if (!ok)
          wrong.push(
            `${key} as ${kindName}, Host ${host.slice(0, 40)}: ${status} ${body.slice(0, 100)} (expected ${want})`,
          );
      }
    };
    for (const cell of refusedCells) await check(cell);
    expect(wrong).toEqual([]);
    expect(await fingerprint()).toEqual(before);
    for (const cell of allowedCells) await check(cell);
    expect(wrong).toEqual([]);
  });

  it('refuses paths that normalize to another route (dot-segments, backslashes, encoded slashes) with a 400, before any rule', async () => {
    const before = await fingerprint();
    const wrong: string[] = [];
    for (const { method, target } of hostilePaths()) {
      for (const kind of ['no token', 'read-only', 'admin']) {
        const { status, body } = await send(app.server.url, method, target, {
          host: `127.0.0.1:${port}`,
          ...tokens.get(kind)!,
        });
        const error = status === 400 ? (JSON.parse(body) as { error: string }).error : '';
        if (status !== 400 || !/path|request target/.test(error))
          wrong.push(`${method} ${target} as ${kind}: ${status} ${body.slice(0, 100)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await fingerprint()).toEqual(before);
  });

  it('refuses a token whose exp is past any sane bound (milliseconds, 1e20) with a 401, never a 500', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const expiresIn of [1e20, Date.now() - now, 11 * 366 * 86_400]) {
      const token = await mint(hs256(), { role: 'admin', expiresIn });
      const { status, body } = await send(app.server.url, 'GET', '/api/v1/leases', {
        host: `127.0.0.1:${port}`,
        ...bearer(token),
      });
      expect(status, String(expiresIn)).toBe(401);
      expect(JSON.parse(body).error).toMatch(/exp must be in seconds/);
    }
    const fine = await mint(hs256(), { role: 'admin', expiresIn: 9 * 365 * 86_400 });
    expect(
      (await send(app.server.url, 'GET', '/api/v1/leases', { host: `127.0.0.1:${port}`, ...bearer(fine) })).status,
    ).toBe(200);
  });

  it('judges a Referer from another site like an Origin, when there is no Origin', async () => {
    const before = await fingerprint();
    const admin = tokens.get('admin')!;
    const host = `127.0.0.1:${port}`;
    const evil = await send(app.server.url, 'POST', '/api/v1/system/maintenance/pop', {
      host,
      referer: 'https://evil.example/page',
      ...admin,
    });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).error).toBe('cross-origin request refused (Referer: https://evil.example/page)');
    expect(await fingerprint()).toEqual(before);
    const own = await send(app.server.url, 'GET', '/api/v1/leases', {
      host,
      referer: `http://${host}/leases`,
      ...admin,
    });
    expect(own.status).toBe(200);
  });

  it('answers HEAD only on public reads: a HEAD on a pop takes no lease', async () => {
    const before = await fingerprint();
    const admin = tokens.get('admin')!;
    for (const [key, level] of Object.entries(ACCESS)) {
      const [method, pattern] = key.split(' ');
      if (method !== 'GET') continue;
      const { status } = await send(app.server.url, 'HEAD', targetOf(pattern), { host: `127.0.0.1:${port}`, ...admin });
      if (level === 'public') expect(status, key).toBeLessThan(400);
      else expect(status, key).toBe(405);
    }
    expect(await fingerprint()).toEqual(before);
  });
});

describe('auth off: a Host that is more than a name and a port names no server of ours', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  it('refuses every route for every hostile Host (403), as a foreign name is', async () => {
    const port = new URL(app.server.url).port;
    const wrong: string[] = [];
    const [{ n: before }] = await app.db.query<{ n: number }>('select count(*)::int as n from queen.audit_log');
    for (const key of Object.keys(ACCESS)) {
      const [method, pattern] = key.split(' ');
      for (const host of hostileHosts(port)) {
        const { status, body } = await send(app.server.url, method, pattern.replace(/\[\w+\]/g, 'x'), { host });
        if (status !== 403 || !body.includes('host not allowed'))
          wrong.push(`${key}, Host ${host.slice(0, 40)}: ${status} ${body.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
    const [{ n: after }] = await app.db.query<{ n: number }>('select count(*)::int as n from queen.audit_log');
    expect(after).toBe(before);
  });

  it('answers JSON 404 under /streams/v1, and a groups page with a mangled group shows all groups', async () => {
    const host = `127.0.0.1:${new URL(app.server.url).port}`;
    const missing = await send(app.server.url, 'POST', '/streams/v1/nope', { host });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error).toMatch(/no such API route/);
    for (const group of ['%00', 'x'.repeat(600)]) {
      const page = await send(app.server.url, 'GET', `/groups?group=${group}`, { host });
      expect(page.status, group.slice(0, 10)).toBe(200);
    }
  });
});
