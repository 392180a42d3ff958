// Typed responses: every success response of the OpenAPI document (lib/http/openapi.ts, from the
// zod schemas of lib/http/responses.ts) has a schema, and the real answers of every route validate
// against the document's own JSON Schema (Ajv, draft 2020-12). The app runs with auth on, as an
// admin, on data that makes every route answer with content: messages, leases, a dead letter,
// traces, a subscription, seeks, a pause.
import fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, mint } from './support/tokens';

type Media = Record<string, { schema?: Record<string, unknown> }>;
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Media }> }>>;
  components: { schemas: Record<string, unknown> };
};

interface Answer {
  key: string;
  status: number;
  contentType: string;
  body: unknown;
}

let app: TestApp;
let doc: Doc;
let token: string;
const answers: Answer[] = [];

/** The access-table key of a concrete request: `GET /api/v1/resources/queues/[queue]`. */
function keyOf(method: string, path: string): string {
  const parts = path.split('?')[0].split('/').filter(Boolean);
  const candidates = Object.keys(ACCESS).filter((k) => {
    const [m, pattern] = k.split(' ');
    const segs = pattern.split('/').filter(Boolean);
    return m === method && segs.length === parts.length && segs.every((s, i) => s.startsWith('[') || s === parts[i]);
  });
  // a static segment beats a parameter, as Next matches
  candidates.sort((a, b) => (a.match(/\[/g)?.length ?? 0) - (b.match(/\[/g)?.length ?? 0));
  if (!candidates.length) throw new Error(`no route for ${method} ${path}`);
  return candidates[0];
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(app.server.url + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: abort.signal,
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = contentType.startsWith('text/event-stream') ? '' : await res.text();
  abort.abort();
  let parsed: unknown = text;
  if (contentType.startsWith('application/json')) parsed = JSON.parse(text);
  answers.push({ key: keyOf(method, path), status: res.status, contentType, body: parsed });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return parsed as any;
}

/** Every route once or more with something to say. */
async function everyRoute() {
  const get = (path: string) => call('GET', path);
  const post = (path: string, body?: unknown) => call('POST', path, body);
  const del = (path: string) => call('DELETE', path);

  await get('/health');
  await get('/ready');
  await get('/metrics');
  await get('/metrics/prometheus');
  await get('/api/v1/openapi.json');
  await get('/api/auth/session');
  await post('/api/auth/session', { token });
  await del('/api/auth/session');

  const configured = await post('/api/v1/configure', {
    queue: 'rs.q',
    namespace: 'rs',
    task: 't',
    options: { leaseTime: 120, retryLimit: 0, deadLetterQueue: true, dlqAfterMaxRetries: true },
  });
  const partitionId = configured.partitionId as string;
  await post('/api/v1/push', {
    items: [1, 2, 3, 4, 5, 6].map((n) => ({
      queue: 'rs.q',
      partition: 'Default',
      payload: { n },
      transactionId: `r${n}`,
    })),
  });
  await post('/api/v1/push', { items: [{ queue: 'rs.q', partition: 'Default', payload: {}, transactionId: 'r1' }] }); // a duplicate
  const first = await get('/api/v1/pop/queue/rs.q?batch=2&wait=false');
  await post(`/api/v1/lease/${first.leaseId}/extend`, { seconds: 60 });
  await post('/api/v1/ack', { transactionId: 'r1', partitionId, leaseId: first.leaseId, status: 'completed' });
  await post('/api/v1/ack/batch', {
    acknowledgments: [{ transactionId: 'r2', partitionId, leaseId: first.leaseId, status: 'failed', error: 'boom' }],
  });
  const second = await get('/api/v1/pop/queue/rs.q?batch=1&wait=false');
  await post('/api/v1/ack', {
    transactionId: second.messages[0].transactionId,
    partitionId,
    leaseId: second.leaseId,
    status: 'failed', // no error text: a dead letter whose errorMessage is null
  });
  const grouped = await get('/api/v1/pop/queue/rs.q/partition/Default?wait=false&consumerGroup=g&batch=2');
  await get('/api/v1/pop?namespace=rs&wait=false&consumerGroup=g2');
  await get('/api/v1/leases');
  await get('/api/v1/consumers');
  await get(`/api/v1/consumer-groups/g`);
  await post(`/api/v1/leases/${grouped.leaseId}/release`, { reason: 'schema test' });
  const g4 = await get('/api/v1/pop/queue/rs.q?wait=false&consumerGroup=g4');
  await post('/api/v1/leases/release', { leaseIds: [g4.leaseId], reason: 'schema test' });
  await post(`/api/v1/cursors/${partitionId}/g4/set-aside`, { action: 'skip', reason: 'schema test' });
  await get('/api/dashboard/groups');
  await post('/api/v1/transaction', {
    operations: [{ type: 'push', items: [{ queue: 'rs.q', payload: { tx: true }, transactionId: 'rtx' }] }],
  });
  await post('/api/v1/consumer-groups/g/subscription', {
    queue: 'rs.q',
    subscriptionMode: 'new',
    subscriptionFrom: 'now',
  });
  await post('/api/v1/consumer-groups/g3/subscription', {
    queue: 'rs.q',
    subscriptionTimestamp: new Date().toISOString(),
  });
  await post('/api/v1/traces', {
    transactionId: 'r4',
    partitionId,
    data: { step: 1 },
    traceNames: ['tn'],
    eventType: 'info',
  });
  await get(`/api/v1/traces/${partitionId}/r4`);
  await get('/api/v1/traces/by-name/tn');
  await get('/api/v1/traces/names');

  const query = await post('/streams/v1/queries', {
    name: 'rs-query',
    source_queue: 'rs.q',
    sink_queue: 'rs.sink',
    config_hash: 'a'.repeat(64),
  });
  const source = await get('/api/v1/pop/queue/rs.q?wait=false&consumerGroup=sg&batch=1');
  await post('/streams/v1/cycle', {
    query_id: query.query_id,
    partition_id: source.partitionId,
    consumer_group: 'sg',
    state_ops: [{ type: 'upsert', key: 'k1', value: { n: 1 } }],
    push_items: [{ queue: 'rs.sink', payload: { out: 1 } }],
    ack: { transactionId: source.messages[0].transactionId, leaseId: source.leaseId },
  });
  await post('/streams/v1/state/get', { query_id: query.query_id, partition_id: source.partitionId, key_prefix: 'k' });
  await get('/api/dashboard/streams');
  await post(`/api/v1/streams/queries/${query.query_id}/reset`, { reason: 'schema test' });

  await get('/api/v1/resources/queues');
  await get('/api/v1/resources/queues/rs.q');
  await get('/api/v1/resources/overview');
  await get('/api/v1/resources/namespaces');
  await get('/api/v1/resources/tasks');
  await get('/api/v1/messages');
  await get(`/api/v1/messages/${partitionId}/r3`);
  await get('/api/v1/consumer-groups');
  await get('/api/v1/consumer-groups/lagging?minLagSeconds=0');
  await get('/api/v1/stats');
  await get('/api/v1/search?q=rs');
  await get(`/api/v1/search?q=r3`);

  const dlq = await get('/api/v1/dlq');
  const [a, b] = dlq.messages as { partitionId: string; consumerGroup: string; offset: number }[];
  const keyOfDead = (m: typeof a) => ({ partitionId: m.partitionId, consumerGroup: m.consumerGroup, offset: m.offset });
  await post('/api/v1/dlq/requeue', { items: [keyOfDead(a)], dryRun: true });
  await post('/api/v1/dlq/discard', { items: [keyOfDead(b)], dryRun: true });
  await post('/api/v1/dlq/requeue', { items: [keyOfDead(a)], reason: 'schema test' });
  await post('/api/v1/dlq/discard', { items: [keyOfDead(b)], reason: 'schema test' });

  await get('/api/v1/consumer-groups/g/queues/rs.q/seek/preview?toEnd=true');
  await post('/api/v1/consumer-groups/g/queues/rs.q/seek', { toEnd: true, reason: 'schema test' });
  await post('/api/v1/consumer-groups/g/queues/rs.q/partitions/Default/seek', { toEnd: true, reason: 'schema test' });
  await get('/api/v1/system/maintenance/pop');
  await post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'schema test' });
  await post(`/api/v1/cursors/${partitionId}/g/pause`, { paused: true, reason: 'schema test', until: null });
  await get('/api/dashboard/overview');
  await get('/api/dashboard/queues/rs.q');
  await post(`/api/v1/cursors/${partitionId}/g/pause`, { paused: false });
  await get('/api/dashboard/maintenance');
  await get('/api/dashboard/process');
  await get('/api/dashboard/replica');
  await get('/api/dashboard/system');
  await get('/api/dashboard/dead-letter-errors');
  await get('/api/dashboard/pop-preview?queue=rs.q&wait=false');
  await get('/api/dashboard/pop-preview?queue=rs.nowhere'); // why: no-queue
  await post('/api/v1/push', { items: [{ queue: 'rs.held', payload: {}, transactionId: 'h1' }] });
  await get('/api/v1/pop/queue/rs.held?wait=false');
  await get('/api/dashboard/pop-preview?queue=rs.held'); // why: leased, with the leases named
  await get('/api/dashboard/pop-target?queue=rs.q&consumerGroup=g');
  await get('/api/dashboard/queues/rs.q/partitions/Default');
  await get(
    `/api/dashboard/activity?since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}&partitions=${encodeURIComponent(JSON.stringify([['rs.q', 'Default']]))}`,
  );
  await get('/api/dashboard/recent-claims');
  await get('/api/v1/events');
  await get('/api/v1/audit');

  await del(`/api/v1/messages/${partitionId}/r6?reason=schema%20test`);
  await del('/api/v1/consumer-groups/g/queues/rs.q?reason=schema%20test');
  await del('/api/v1/consumer-groups/g2?reason=schema%20test');
  await del('/api/v1/resources/queues/rs.q?reason=schema%20test');
}

beforeAll(async () => {
  app = await startApp({
    JWT_ENABLED: 'true',
    JWT_SECRET: SECRET,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    LOG_LEVEL: 'warn',
  });
  token = await mint(hs256(), { role: 'admin' });
  doc = (await (await fetch(`${app.server.url}/api/v1/openapi.json`, { headers: bearer(token) })).json()) as Doc;
  await everyRoute();
  if (process.env.DUMP_ANSWERS) fs.writeFileSync(process.env.DUMP_ANSWERS, JSON.stringify(answers, null, 1));
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

/**
 * The document's schema with every object closed (no field it does not name), unless it says
 * otherwise: the document is open to fields a later release adds, this test is not, so a field the
 * code answers and the document does not describe fails here.
 */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const out = Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)])) : closed(v),
    ]),
  );
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const openApiPath = (pattern: string) => pattern.replace(/\[(\w+)\]/g, '{$1}');
const responseOf = (key: string, status: number) => {
  const [method, pattern] = key.split(' ');
  return doc.paths[openApiPath(pattern)]?.[method.toLowerCase()]?.responses[String(status)];
};

describe('the success responses of the OpenAPI document', () => {
  it('each have a schema that says what the answer holds', () => {
    const empty: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, r] of Object.entries(op.responses)) {
          if (!status.startsWith('2') || !r.content) continue;
          for (const [type, media] of Object.entries(r.content)) {
            const schema = media.schema ?? {};
            const says =
              type !== 'application/json'
                ? schema.type === 'string'
                : Object.keys(schema).some((k) =>
                    ['type', 'properties', 'items', 'anyOf', 'oneOf', '$ref'].includes(k),
                  );
            if (!says) empty.push(`${method.toUpperCase()} ${path} ${status} ${type}`);
          }
        }
      }
    }
    expect(empty).toEqual([]);
  });
});

describe('the real answers of every route', () => {
  it('cover every route with a success', () => {
    const answered = new Set(answers.filter((a) => a.status < 300).map((a) => a.key));
    expect(Object.keys(ACCESS).filter((k) => !answered.has(k))).toEqual([]);
  });

  it("validate against the document's schemas", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
    const failures: string[] = [];
    for (const a of answers) {
      if (a.status >= 300 || a.status === 204) continue;
      const r = responseOf(a.key, a.status);
      if (!r) {
        failures.push(`${a.key}: ${a.status} is not in the document`);
        continue;
      }
      const type = a.contentType.split(';')[0].trim();
      const media = r.content?.[type];
      if (!media) {
        failures.push(
          `${a.key} ${a.status}: ${type} is not in the document (${Object.keys(r.content ?? {}).join(', ')})`,
        );
        continue;
      }
      if (type !== 'application/json') continue;
      const schema = closed(
        JSON.parse(JSON.stringify(media.schema ?? {}).replaceAll('"#/components/', '"doc#/components/')),
      ) as Record<string, unknown>;
      const validate = ajv.compile(schema);
      if (!validate(a.body))
        failures.push(`${a.key} ${a.status}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 600)}`);
    }
    expect(failures).toEqual([]);
  });
});
