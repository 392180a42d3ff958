// A MEASURING TOOL, not a server to run: the floor of the request layer (issue 32, item 1,
// docs/performance.md "The request layer against the floor"). A bare node:http + pg server that
// answers only the hot routes with the same SQL calls the app's handlers make and the same wire
// JSON, well enough for the bench's one-message scenarios, and nothing else: no validation, no
// auth, no Host or cross-site checks, no log line, no metrics, no coalescing of pushes, no long
// polls (a pop is one call, as the app's non-waiting pop). Its CPU per request, beside the app's,
// is what the app's request layer costs above the bare minimum.
//
// It serves a database the app has already migrated (start the app on it once):
//   PORT=6640 DATABASE_URL=postgres://postgres@127.0.0.1:5432/queen_x node scripts/floor-server.mjs
//   node scripts/bench.mjs --target http://127.0.0.1:6640 --pid <its pid> --only push-1x2000p --seconds 5
import { randomFillSync } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 20), // as the app's pool
  statement_timeout: 30_000,
  application_name: `queen-floor/${process.pid}`,
});
pool.on('error', () => {});

const random = Buffer.alloc(16);
/** A UUIDv7, as lib/uuid.ts makes them (a lease id, a transaction id the client did not give). */
function uuidv7() {
  randomFillSync(random);
  random.writeUIntBE(Date.now(), 0, 6);
  random[6] = (random[6] & 0x0f) | 0x70;
  random[8] = (random[8] & 0x3f) | 0x80;
  const h = random.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const send = (res, status, text) =>
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
    .end(text);

/** A function's result row as the wire names its columns: [wire name, column] pairs. */
const onTheWire = (names) => (row) => Object.fromEntries(names.map(([name, column]) => [name, row[column]]));
const PUSHED = onTheWire([
  ['index', 'idx'],
  ['transaction_id', 'transaction_id'],
  ['status', 'status'],
  ['message_id', 'message_id'],
  ['partition_id', 'partition_id'],
  ['trace_id', 'trace_id'],
  ['queueName', 'queue_name'],
]);
const ACKED = onTheWire([
  ['index', 'idx'],
  ['transactionId', 'transaction_id'],
  ['success', 'success'],
  ['error', 'error'],
  ['queueName', 'queue_name'],
  ['partitionName', 'partition_name'],
  ['leaseReleased', 'lease_released'],
  ['dlq', 'dlq'],
]);

async function bodyOf(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function push(req, res) {
  const { items } = await bodyOf(req);
  const stored = items.map((i) => ({
    queue: i.queue,
    partition: i.partition ?? 'Default',
    payload: i.payload === undefined ? {} : i.payload,
    transactionId: i.transactionId ?? uuidv7(),
    producerSub: null,
    traceId: null,
  }));
  const { rows } = await pool.query('select * from queen.push(p_items => $1::jsonb)', [JSON.stringify(stored)]);
  send(res, 201, JSON.stringify(rows.map(PUSHED)));
}

const POP = `select * from queen.pop_or_why(
  p_lease_id => $1::uuid, p_queue => $2::text, p_partition => $3::text, p_namespace => $4::text, p_task => $5::text,
  p_group => $6::text, p_batch => $7::integer, p_max_partitions => $8::integer, p_auto_ack => $9::boolean,
  p_lease_seconds => $10::integer, p_subscription_mode => $11::text, p_subscription_from => $12::timestamptz,
  p_holder => $13::text, p_hold_under_full => $14::boolean, p_subject => $15::text)`;

const str = (v) => (v === null ? 'null' : JSON.stringify(v));

async function pop(req, res, queue, partition, search) {
  const q = new URLSearchParams(search);
  const flag = (name) => q.get(name) === 'true' || q.get(name) === '1';
  const group = q.get('consumerGroup') || '__QUEUE_MODE__';
  const autoAck = flag('autoAck');
  const leaseId = uuidv7();
  const mode = q.get('subscriptionMode')?.toLowerCase();
  const holder = req.headers['x-queen-consumer'] ?? `unknown ${req.headers['user-agent'] ?? ''}`.trim();
  const { rows } = await pool.query(POP, [
    leaseId,
    queue,
    partition,
    q.get('namespace') ?? '',
    q.get('task') ?? '',
    group,
    Number(q.get('batch') ?? 200),
    partition !== null ? 1 : Number(q.get('partitions') ?? 1),
    autoAck,
    Math.max(0, Number(q.get('leaseSeconds') ?? 0)),
    mode === 'new' || mode === 'new-only' ? 'new' : 'all',
    null,
    holder,
    false,
    null,
  ]);
  if (rows.length === 0 || rows[0].empty_reason != null) return void res.writeHead(204).end();
  // the body as lib/broker/pop.ts writes it (payloads spliced in as PostgreSQL's text)
  const lease = JSON.stringify(autoAck ? '' : leaseId);
  const groupJson = JSON.stringify(group);
  const partitions = new Set();
  const messages = rows.map((r) => {
    partitions.add(r.partition_id);
    return `{"id":"${r.id}","transactionId":${JSON.stringify(r.transaction_id)},"traceId":${str(r.trace_id)},"data":${r.payload},"producerSub":${str(r.producer_sub)},"createdAt":"${r.created_at}","partitionId":"${r.partition_id}","partition":${JSON.stringify(r.partition_name)},"leaseId":${lease},"consumerGroup":${groupJson}}`;
  });
  const first = rows[0];
  send(
    res,
    200,
    `{"success":true,"queue":${JSON.stringify(queue)},"partition":${JSON.stringify(first.partition_name)},"partitionId":"${first.partition_id}","leaseId":${lease},"consumerGroup":${groupJson},"messages":[${messages.join(',')}],"partitionsClaimed":${partitions.size}}`,
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function ack(req, res, batch) {
  const body = await bodyOf(req);
  const items = batch ? body.acknowledgments : [body];
  const group = batch ? body.consumerGroup : undefined;
  const payload = items.map((i) => ({
    transactionId: i.transactionId,
    partitionId: UUID.test(i.partitionId) ? i.partitionId : null,
    status: i.status ?? 'completed',
    error: i.error ?? null,
    leaseId: !i.leaseId ? null : UUID.test(i.leaseId) ? i.leaseId : '00000000-0000-0000-0000-000000000000',
    consumerGroup: group || i.consumerGroup || null,
  }));
  const { rows } = await pool.query('select * from queen.ack($1::jsonb, null)', [JSON.stringify(payload)]);
  send(res, 200, JSON.stringify(rows.map(ACKED)));
}

const POP_ROUTE = /^\/api\/v1\/pop\/queue\/([^/]+)(?:\/partition\/([^/]+))?$/;

function handle(req, res) {
  const url = req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (req.method === 'POST' && path === '/api/v1/push') return push(req, res);
  if (req.method === 'POST' && path === '/api/v1/ack') return ack(req, res, false);
  if (req.method === 'POST' && path === '/api/v1/ack/batch') return ack(req, res, true);
  const m = req.method === 'GET' ? POP_ROUTE.exec(path) : null;
  if (m)
    return pop(
      req,
      res,
      decodeURIComponent(m[1]),
      m[2] === undefined ? null : decodeURIComponent(m[2]),
      q < 0 ? '' : url.slice(q + 1),
    );
  if (path === '/health') return void send(res, 200, '{"status":"ok"}');
  send(res, 404, '{"error":"not a route of the floor server"}');
}

let served = 0;
http
  .createServer((req, res) => {
    served++;
    Promise.resolve(handle(req, res)).catch((err) => {
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: err.message }));
      else res.destroy();
    });
  })
  .listen(Number(process.env.PORT ?? 6640), process.env.HOST ?? '127.0.0.1');
// a clean exit, so that `node --cpu-prof` writes its profile; the count of requests, to divide it by
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
process.on('exit', () => process.stderr.write(`floor-server: ${served} requests served\n`));
