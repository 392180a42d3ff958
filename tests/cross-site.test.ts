// Auth off: a web page on another origin cannot drive the broker through the operator's browser,
// a body that is not JSON is refused, and every answer carries the security headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

describe('cross-site requests and headers', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ ALLOWED_HOSTS: 'queen.example.com' }); // the public name a proxy below forwards
  });
  afterAll(() => app.stop());

  const written = async () =>
    (
      await app.db.query(`select (select count(*) from queen.audit_log)::int as audit, (select value::text from queen.system_state where key = 'pop_maintenance') as maintenance,
                                (select count(*) from queen.queues)::int as queues`)
    )[0];

  const maintenanceOn = (headers: Record<string, string>, body = '{"enabled":true,"reason":"x"}') =>
    fetch(`${app.server.url}/api/v1/system/maintenance/pop`, { method: 'POST', headers, body });

  it('refuses a state change from another origin, by Origin or Sec-Fetch-Site, and writes nothing', async () => {
    const before = await written();
    for (const headers of <Record<string, string>[]>[
      { 'content-type': 'application/json', origin: 'http://evil.example' },
      { 'content-type': 'application/json', origin: 'null' },
      { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      { 'content-type': 'application/json', 'sec-fetch-site': 'same-site', origin: `http://127.0.0.1:1` },
    ]) {
      const res = await maintenanceOn(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect((await res.json()).error).toMatch(/^cross-(site|origin) request refused/);
    }
    // the attack of the review: a text/plain form post (no preflight) from a foreign page
    const form = await maintenanceOn({
      'content-type': 'text/plain',
      origin: 'http://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(form.status).toBe(403);
    // a pop is a GET that takes a lease: guarded the same way; so is the event stream
    const pop = await fetch(`${app.server.url}/api/v1/pop/queue/x?wait=false`, {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(pop.status).toBe(403);
    const events = await fetch(`${app.server.url}/api/v1/events`, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(events.status).toBe(403);
    expect(events.headers.get('access-control-allow-origin')).toBeNull();
    expect(await written()).toEqual(before);
  });

  it('accepts the same request from the dashboard itself and from clients outside a browser', async () => {
    const own = await maintenanceOn({
      'content-type': 'application/json',
      origin: app.server.url,
      'sec-fetch-site': 'same-origin',
    });
    expect(own.status).toBe(200);
    const script = await maintenanceOn({ 'content-type': 'application/json' }, '{"enabled":false}');
    expect(script.status).toBe(200);
    // a proxy in front that forwards the public host name
    const proxied = await maintenanceOn(
      {
        'content-type': 'application/json',
        origin: 'https://queen.example.com',
        'x-forwarded-host': 'queen.example.com',
      },
      '{"enabled":false}',
    );
    expect(proxied.status).toBe(200);
  });

  it('answers 415 to a body that is not JSON, before reading it, and writes nothing', async () => {
    const before = await written();
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
    ]) {
      const res = await fetch(`${app.server.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: '{"items":[{"queue":"ct.q"}]}',
      });
      expect(res.status, type).toBe(415);
      expect((await res.json()).error).toBe(`content-type must be application/json, not ${type}`);
    }
    const none = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      body: new Uint8Array(Buffer.from('{"items":[{"queue":"ct.q"}]}')),
    });
    expect(none.status).toBe(415);
    expect(await written()).toEqual(before);
    const withCharset = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: '{"items":[{"queue":"ct.q"}]}',
    });
    expect(withCharset.status).toBe(201);
  });

  it('sends the security headers on the API and a nonce CSP on pages', async () => {
    const api = await fetch(`${app.server.url}/api/v1/resources/queues`);
    expect(api.headers.get('x-content-type-options')).toBe('nosniff');
    expect(api.headers.get('referrer-policy')).toBe('same-origin');
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const page = await fetch(`${app.server.url}/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    const again = await fetch(`${app.server.url}/`);
    expect(again.headers.get('content-security-policy')).not.toContain(nonce);
  });
});
