// GET /api/v1/openapi.json against the access table and the running app: the document is
// OpenAPI 3.1 in shape, names exactly the routes of lib/http/access.ts (a new route without an
// operation fails here), and every operation it lists answers, with an admin token, one of the
// statuses it declares; never a 5xx, never Next's own "no such route" 404.
import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, mint } from './support/tokens';

type Operation = {
  parameters: { name: string; in: string; required?: boolean; schema?: unknown }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<string, { description: string }>;
  security: unknown[];
  summary: string;
};
type Doc = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let app: TestApp;
let doc: Doc;
let auth: Record<string, string>;

beforeAll(async () => {
  app = await startApp({ JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
  auth = bearer(await mint(hs256(), { role: 'admin' }));
  const res = await fetch(`${app.server.url}/api/v1/openapi.json`); // public: no token
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Doc;
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

/** Every operation of the document as `METHOD /pattern` (`{x}` back to `[x]`), with its path. */
function operations() {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, '[$1]')}`,
        method: method.toUpperCase(),
        path,
        op,
      })),
  );
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 in shape', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    const ids = new Set<string>();
    for (const { key, path, op } of operations()) {
      expect(path, key).toMatch(/^\//);
      expect(path, key).not.toMatch(/[[\]]/);
      expect(Object.keys(op.responses).length, key).toBeGreaterThan(0);
      for (const status of Object.keys(op.responses)) expect(status, key).toMatch(/^[1-5]\d\d$/);
      for (const r of Object.values(op.responses)) expect(typeof r.description, key).toBe('string');
      const declared = op.parameters
        .filter((p) => p.in === 'path')
        .map((p) => p.name)
        .sort();
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(declared, `${key}: path parameters`).toEqual(templated);
      for (const p of op.parameters) {
        expect(['path', 'query', 'header', 'cookie'], key).toContain(p.in);
        if (p.in === 'path') expect(p.required, key).toBe(true);
        expect(p.schema, `${key} ${p.name}`).toBeTypeOf('object');
      }
      const seen = new Set<string>();
      for (const p of op.parameters) {
        expect(seen.has(`${p.in} ${p.name}`), `${key}: ${p.name} twice`).toBe(false);
        seen.add(`${p.in} ${p.name}`);
      }
      const id = (op as { operationId?: string }).operationId;
      expect(id, key).toBeTruthy();
      expect(ids.has(id!), `${key}: operationId ${id} twice`).toBe(false);
      ids.add(id!);
    }
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has exactly the routes of the access table', () => {
    expect(
      operations()
        .map((o) => o.key)
        .sort(),
    ).toEqual(Object.keys(ACCESS).sort());
  });

  it('states the security of each route as the access table does', () => {
    for (const { key, op } of operations()) {
      if (ACCESS[key] === 'public') expect(op.security, key).toEqual([]);
      else expect(op.security, key).toEqual([{ bearer: [] }]);
      expect((op as { 'x-required-role'?: string })['x-required-role'], key).toBe(ACCESS[key]);
    }
  });

  it('describes request bodies with the zod schemas (a sample: push)', () => {
    const push = doc.paths['/api/v1/push'].post.requestBody!.content['application/json'].schema as {
      properties: Record<string, { type: string }>;
      required: string[];
    };
    expect(push.properties.items.type).toBe('array');
    expect(push.required).toContain('items');
    const pop = doc.paths['/api/v1/pop/queue/{queue}'].get.parameters.map((p) => p.name);
    expect(pop).toEqual(
      expect.arrayContaining(['batch', 'wait', 'timeout', 'consumerGroup', 'leaseSeconds', 'autoAck']),
    );
  });
});

const SAMPLES: Record<string, string> = {
  queue: 'openapi.q',
  partition: 'p',
  group: 'g',
  name: 'n',
  transactionId: 't1',
  partitionId: randomUUID(),
  leaseId: randomUUID(),
};

describe('every operation answers as the document says', () => {
  it('with a status it lists, never 5xx, never a missing route', async () => {
    const failures: string[] = [];
    for (const { key, method, path, op } of operations()) {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(SAMPLES[name] ?? 'x'));
      const media = op.requestBody?.content['application/json'];
      const body = media ? JSON.stringify(media.example ?? {}) : undefined;
      const abort = new AbortController();
      const res = await fetch(app.server.url + url, {
        method,
        headers: { 'content-type': 'application/json', ...auth },
        body,
        signal: abort.signal,
      });
      // the event stream never ends by itself: its status is all this needs
      const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await res.text();
      abort.abort();
      const listed = Object.keys(op.responses).map(Number);
      if (!listed.includes(res.status))
        failures.push(`${key}: ${res.status} is not among ${listed.join(', ')}: ${text.slice(0, 200)}`);
      // the document's example body is one the route's own schema accepts
      if (media?.example !== undefined && res.status === 400)
        failures.push(`${key}: its example was refused: ${text.slice(0, 200)}`);
      if (res.status >= 500) failures.push(`${key}: ${res.status} ${text.slice(0, 200)}`);
      // an object that is not there is a JSON {"error"}; a route that is not there is Next's HTML page
      if (res.status === 404 && !/^\s*\{/.test(text)) failures.push(`${key}: no such route (${text.slice(0, 80)})`);
      if (res.status === 403 && text.includes('no entry in the access table'))
        failures.push(`${key}: not in the access table`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
