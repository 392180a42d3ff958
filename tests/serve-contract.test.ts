// scripts/serve.mjs's contract with Next.js (scripts/lib/routes.mjs): the boot-time check refuses a
// build whose internals differ and names what differs; the fast path serves exactly the app's route
// files and the access table's routes; and the same requests answer alike through the fast path and
// through Next's own handler (SERVE_FAST_PATH=false, what `npm run dev` uses).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { routeKeys, sourceRoutes } from '../scripts/lib/routes.mjs';
import { startApp, type TestApp } from './support/app';

const root = path.join(__dirname, '..');
const routesCli = path.join(root, 'scripts', 'lib', 'routes.mjs');
const run = promisify(execFile);

/** Runs the check on a build folder: its exit code, stdout and stderr. */
async function check(buildDir?: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [routesCli, ...(buildDir ? [buildDir] : [])], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A fake `.next` whose server folder holds these files. */
function fakeBuild(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-contract-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, 'server', name)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'server', name), text);
  }
  return dir;
}

const INSTRUMENTATION = { 'instrumentation.js': 'exports.register = async () => {};' };
const MANIFEST = {
  'app-paths-manifest.json': JSON.stringify({ '/x/route': 'app/x/route.js', '/page': 'app/page.js' }),
};

describe('the boot-time check of Next.js internals', () => {
  it('passes on this build and lists its routes', async () => {
    const { code, stdout, stderr } = await check();
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).routes).toContain('POST /api/v1/push');
  });

  const cases: [string, Record<string, string>, RegExp][] = [
    ['no manifest', { ...INSTRUMENTATION }, /app-paths-manifest\.json is missing or not JSON/],
    [
      'a manifest that is not page → file',
      { ...INSTRUMENTATION, 'app-paths-manifest.json': '[1]' },
      /not an object of page → file/,
    ],
    [
      'a route file without routeModule',
      { ...INSTRUMENTATION, ...MANIFEST, 'app/x/route.js': 'exports.handler = () => {};' },
      /\/x\/route: the compiled route exports no routeModule/,
    ],
    [
      'a routeModule without ensureUserland()',
      { ...INSTRUMENTATION, ...MANIFEST, 'app/x/route.js': 'exports.routeModule = { userland: { GET() {} } };' },
      /\/x\/route: routeModule\.ensureUserland is not a function/,
    ],
    [
      'a userland that is not the route module',
      {
        ...INSTRUMENTATION,
        ...MANIFEST,
        'app/x/route.js': 'exports.routeModule = { async ensureUserland() {}, get userland() { return undefined; } };',
      },
      /routeModule\.userland is not the route's module/,
    ],
    [
      'a userland without handlers',
      {
        ...INSTRUMENTATION,
        ...MANIFEST,
        'app/x/route.js':
          'exports.routeModule = { async ensureUserland() {}, userland: { dynamic: "force-dynamic" } };',
      },
      /exports no HTTP method handler/,
    ],
    [
      'no instrumentation register()',
      {
        ...MANIFEST,
        'app/x/route.js': 'exports.routeModule = { async ensureUserland() {}, userland: { GET() {} } };',
        'instrumentation.js': 'exports.other = 1;',
      },
      /instrumentation\.js does not export register\(\)/,
    ],
  ];
  for (const [name, files, problem] of cases) {
    it(`exits non-zero naming what differs: ${name}`, async () => {
      const dir = fakeBuild(files);
      try {
        const { code, stderr } = await check(dir);
        expect(code).toBe(1);
        expect(stderr).toMatch(/differs from what scripts\/serve\.mjs relies on/);
        expect(stderr).toMatch(problem);
        expect(stderr).toMatch(/SERVE_FAST_PATH=false/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('accepts a fake build that has what it relies on (the cases above differ by one thing each)', async () => {
    const dir = fakeBuild({
      ...INSTRUMENTATION,
      ...MANIFEST,
      'app/x/route.js': 'exports.routeModule = { async ensureUserland() {}, userland: { GET() {}, POST() {} } };',
    });
    try {
      const { code, stdout, stderr } = await check(dir);
      expect(code, stderr).toBe(0);
      expect(JSON.parse(stdout).routes).toEqual(['GET /x', 'POST /x']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the fast path's route set", () => {
  it("equals the app's route files and the access table (Next's metadata files aside)", async () => {
    const { code, stdout, stderr } = await check();
    expect(code, stderr).toBe(0);
    const built: string[] = JSON.parse(stdout).routes;
    // app/icon.svg is served by a route Next generates; it is no route file and needs no access entry
    const routeFile = (key: string) => fs.existsSync(path.join(root, 'app', key.split(' ')[1], 'route.ts'));
    const metadata = built.filter((k) => !routeFile(k));
    for (const key of metadata) expect(fs.statSync(path.join(root, 'app', key.split(' ')[1])).isFile(), key).toBe(true);
    expect(metadata).toEqual(['GET /icon.svg']);
    const served = built.filter((k) => !metadata.includes(k));
    expect(served).toEqual(routeKeys(sourceRoutes(path.join(root, 'app'))));
    expect(served).toEqual(Object.keys(ACCESS).sort());
  });
});

// ---- the same requests through both paths

interface Answer {
  label: string;
  status: number;
  headers: Record<string, string | null>;
  shape: unknown;
}

/** The headers whose values must agree, and those that must merely be present or absent. */
const SAME_VALUE = [
  'content-type',
  'content-security-policy',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'cache-control',
  'allow',
  'x-queen-empty',
  'retry-after',
];
const PRESENT = ['x-request-id', 'set-cookie'];

/** A JSON value's shape: object keys with their shapes, array elements' shapes, primitives' types. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as object)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return typeof value;
}

async function scenario(base: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  const call = async (
    label: string,
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const abort = new AbortController();
    const res = await fetch(base + url, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: abort.signal,
    });
    const stream = res.headers.get('content-type')?.startsWith('text/event-stream');
    const text = stream ? '' : await res.text();
    abort.abort();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = `text of ${text.length > 0 ? 'some' : 'no'} length`;
    }
    const picked: Record<string, string | null> = {};
    for (const h of SAME_VALUE) picked[h] = res.headers.get(h);
    for (const h of PRESENT) picked[h] = res.headers.get(h) === null ? null : 'present';
    answers.push({ label, status: res.status, headers: picked, shape: shapeOf(parsed) });
    return parsed as any;
  };
  await call('health', 'GET', '/health');
  await call('configure', 'POST', '/api/v1/configure', { queue: 'same.q', options: { leaseTime: 30, retryLimit: 1 } });
  await call('push', 'POST', '/api/v1/push', {
    items: [1, 2, 3].map((n) => ({ queue: 'same.q', partition: 'p', payload: { n }, transactionId: `t${n}` })),
  });
  await call('push a duplicate', 'POST', '/api/v1/push', {
    items: [{ queue: 'same.q', partition: 'p', payload: {}, transactionId: 't1' }],
  });
  const popped = await call('pop', 'GET', '/api/v1/pop/queue/same.q?batch=2&wait=false');
  await call('extend', 'POST', `/api/v1/lease/${popped.leaseId}/extend`, { seconds: 60 });
  await call('ack', 'POST', '/api/v1/ack', {
    transactionId: popped.messages[0].transactionId,
    partitionId: popped.partitionId,
    leaseId: popped.leaseId,
    status: 'completed',
  });
  await call('ack batch', 'POST', '/api/v1/ack/batch', {
    acknowledgments: [
      {
        transactionId: popped.messages[1].transactionId,
        partitionId: popped.partitionId,
        leaseId: popped.leaseId,
        status: 'failed',
        error: 'no',
      },
    ],
  });
  await call('pop with group', 'GET', '/api/v1/pop/queue/same.q/partition/p?wait=false&consumerGroup=g');
  await call('pop nothing', 'GET', '/api/v1/pop/queue/empty.q?wait=false');
  await call('discovery without namespace', 'GET', '/api/v1/pop?wait=false');
  await call('queues', 'GET', '/api/v1/resources/queues');
  await call('one queue', 'GET', '/api/v1/resources/queues/same.q');
  await call('no such queue', 'GET', '/api/v1/resources/queues/none.q');
  await call('a percent-encoded parameter', 'GET', '/api/v1/resources/queues/same%2Eq');
  await call('messages', 'GET', '/api/v1/messages');
  await call('dead letters', 'GET', '/api/v1/dlq');
  await call('groups', 'GET', '/api/v1/consumer-groups');
  await call('leases', 'GET', '/api/v1/leases');
  await call('overview', 'GET', '/api/dashboard/overview');
  await call('session', 'GET', '/api/auth/session');
  await call('malformed JSON', 'POST', '/api/v1/push', '{"items":');
  await call('not JSON', 'POST', '/api/v1/push', 'x', { 'content-type': 'text/plain' });
  await call('a field that fails', 'POST', '/api/v1/push', { items: 'no' });
  await call(
    'cross-site',
    'POST',
    '/api/v1/push',
    { items: [] },
    { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' },
  );
  await call('query that fails', 'GET', '/api/v1/pop/queue/same.q?batch=abc&wait=false');
  await call('event stream', 'GET', '/api/v1/events');
  await call('prometheus', 'GET', '/metrics/prometheus');
  await call('delete the queue', 'DELETE', '/api/v1/resources/queues/same.q?reason=done');
  return answers;
}

describe('the fast path and Next’s own handler', () => {
  let fast: TestApp;
  let viaNext: TestApp;
  beforeAll(async () => {
    [fast, viaNext] = await Promise.all([startApp(), startApp({ SERVE_FAST_PATH: 'false' })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([fast?.stop(), viaNext?.stop()]);
  });

  it('answer the same requests alike: status, body shape, key headers', async () => {
    const a = await scenario(fast.server.url);
    const b = await scenario(viaNext.server.url);
    // the scenario means something: it met success, no content, refusals and a stream
    expect(new Set(a.map((x) => x.status))).toEqual(new Set([200, 201, 204, 400, 403, 404, 415]));
    for (let i = 0; i < a.length; i++) expect(b[i], a[i].label).toEqual(a[i]);
  }, 60_000);

  it("Next's own handler is really the one answering with SERVE_FAST_PATH=false", async () => {
    // Next adds its router's Vary to what it serves; the fast path writes only the handler's headers
    expect((await fetch(`${viaNext.server.url}/health`)).headers.get('vary')).toMatch(/rsc/);
    expect((await fetch(`${fast.server.url}/health`)).headers.get('vary')).toBeNull();
  });
});
