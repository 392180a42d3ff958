// DNS rebinding (issue 21): a page on evil.example whose name resolves to 127.0.0.1 sends
// Host and Origin evil.example, so the cross-site guard sees a same-origin request. The Host
// allow-list refuses it: every route, every page, with auth off; with auth on, the requests the
// browser authenticates by itself (the session cookie).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { startServer, type TestServer } from './support/server';
import { SECRET, hs256, mint } from './support/tokens';

interface Answer {
  status: number;
  body: string;
}

/** A request with a Host of our choosing (fetch does not let one set it). */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const evil = (port: string) => ({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` });

describe('the Host allow-list, auth off', () => {
  let app: TestApp;
  let port: string;
  beforeAll(async () => {
    app = await startApp();
    port = new URL(app.server.url).port;
    await app.api.push([{ queue: 'rebind.q', payload: 1 }]);
  });
  afterAll(() => app.stop());

  const written = async () =>
    (
      await app.db.query(`select (select count(*) from queen.audit_log)::int as audit, (select value::text from queen.system_state where key = 'pop_maintenance') as maintenance,
      (select count(*) from queen.queues)::int as queues, (select count(*) from queen.messages)::int as messages,
      (select count(*) from queen.cursors where lease_id is not null)::int as leases`)
    )[0];

  it('refuses the attack of the report (maintenance on, a queue deleted) and writes nothing', async () => {
    const before = await written();
    const on = await send(
      app.server.url,
      'POST',
      '/api/v1/system/maintenance/pop',
      evil(port),
      '{"enabled":true,"reason":"pwned"}',
    );
    expect(on.status).toBe(403);
    expect(JSON.parse(on.body).error).toBe(
      `host not allowed: evil.example:${port} (a name this server is served under goes in ALLOWED_HOSTS)`,
    );
    const del = await send(app.server.url, 'DELETE', '/api/v1/resources/queues/rebind.q', evil(port));
    expect(del.status).toBe(403);
    expect(await written()).toEqual(before);
  });

  it('refuses every route of the access table and every page for a foreign Host, and writes nothing', async () => {
    const before = await written();
    const refused: string[] = [];
    for (const key of Object.keys(ACCESS)) {
      const [method, pattern] = key.split(' ');
      const path = pattern.replace(/\[[^\]]+\]/g, 'rebind.q');
      const r = await send(
        app.server.url,
        method,
        path,
        evil(port),
        method === 'GET' || method === 'DELETE' ? undefined : '{}',
      );
      if (r.status === 403 && r.body.includes('host not allowed')) refused.push(key);
      else refused.push(`${key}: ${r.status}`);
    }
    expect(refused).toEqual(Object.keys(ACCESS));
    for (const page of ['/', '/queues', '/queues/rebind.q', '/leases', '/sign-in']) {
      const r = await send(app.server.url, 'GET', page, evil(port));
      expect(r.status, page).toBe(403);
      expect(r.body, page).toContain('host not allowed');
    }
    expect(await written()).toEqual(before);
  });

  it('refuses a foreign X-Forwarded-Host (a rebinding page can set it) and a missing Host', async () => {
    const r = await send(
      app.server.url,
      'POST',
      '/api/v1/system/maintenance/pop',
      { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'evil.example' },
      '{"enabled":true,"reason":"x"}',
    );
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error).toMatch(/^host not allowed: evil\.example/);
  });

  it('serves the loopback names and addresses', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      `127.1.2.3:${port}`,
      `app.localhost:${port}`,
    ]) {
      // the Origin a page of that name sends (the cross-site guard compares it byte for byte, so not for LOCALHOST)
      const origin: Record<string, string> = host === host.toLowerCase() ? { origin: `http://${host}` } : {};
      const r = await send(app.server.url, 'GET', '/api/v1/system/maintenance/pop', { host, ...origin });
      expect(r.status, host).toBe(200);
      const page = await send(app.server.url, 'GET', '/leases', { host });
      expect(page.status, host).toBe(200);
    }
  });
});

describe('the Host allow-list with ALLOWED_HOSTS, and with auth on', () => {
  let app: TestApp;
  let authed: TestServer;
  beforeAll(async () => {
    app = await startApp({ ALLOWED_HOSTS: 'queen.example.com, other.example' });
    authed = await startServer(app.db.url, { JWT_ENABLED: 'true', JWT_SECRET: SECRET });
  });
  afterAll(async () => {
    await authed.stop();
    await app.stop();
  });

  it('serves the names of ALLOWED_HOSTS (any port, any case) and no other', async () => {
    const { port } = new URL(app.server.url);
    for (const host of ['queen.example.com', `Queen.Example.com:${port}`, 'other.example:443']) {
      expect((await send(app.server.url, 'GET', '/api/v1/resources/queues', { host })).status, host).toBe(200);
    }
    expect((await send(app.server.url, 'GET', '/api/v1/resources/queues', { host: 'example.com' })).status).toBe(403);
    expect(
      (await send(app.server.url, 'GET', '/api/v1/resources/queues', { host: 'evil.queen.example.com' })).status,
    ).toBe(403);
  });

  it("auth on: a bearer token is served under any Host; the session cookie only under this server's", async () => {
    const { port } = new URL(authed.url);
    const token = await mint(hs256(), { sub: 'alice', role: 'admin' });
    const bearer = await send(authed.url, 'GET', '/api/v1/resources/queues', {
      host: `evil.example:${port}`,
      authorization: `Bearer ${token}`,
    });
    expect(bearer.status).toBe(200);
    const cookie = await send(
      authed.url,
      'POST',
      '/api/v1/system/maintenance/pop',
      { ...evil(port), cookie: `queen_session=${token}` },
      '{"enabled":true,"reason":"pwned"}',
    );
    expect(cookie.status).toBe(403);
    expect(JSON.parse(cookie.body).error).toMatch(/^host not allowed/);
    const page = await send(authed.url, 'GET', '/queues', {
      host: `evil.example:${port}`,
      cookie: `queen_session=${token}`,
    });
    expect(page.status).toBe(403);
    const own = await send(authed.url, 'GET', '/leases', {
      host: `127.0.0.1:${port}`,
      cookie: `queen_session=${token}`,
    });
    expect(own.status).toBe(200);
    expect(
      (await app.db.query(`select value::text as v from queen.system_state where key = 'pop_maintenance'`))[0]?.v ??
        null,
    ).not.toMatch(/"enabled": ?true/);
  });
});

describe('ALLOWED_HOSTS is validated', () => {
  it('refuses a URL where a name belongs', async () => {
    const { loadConfig } = await import('@/lib/config.mjs');
    expect(() => loadConfig({ ALLOWED_HOSTS: 'https://queen.example.com/' })).toThrow(
      /ALLOWED_HOSTS: must be a comma-separated list of host names/,
    );
    expect(loadConfig({ ALLOWED_HOSTS: 'a.example,b.example:8080' }).allowedHosts.names).toEqual(
      expect.arrayContaining(['a.example', 'b.example']),
    );
  });
});
