// `npm run bench`: measures the broker's hot paths from outside, over HTTP. Figures are printed,
// never asserted. By default it starts the built app on a fresh database (DATABASE_URL's server,
// else an embedded PostgreSQL); with --target it loads any Queen-compatible broker already
// running there instead, so two brokers can be compared side by side.
//
//   node scripts/bench.mjs [--seconds N] [--target URL] [--only a,b] [--other-partitions N]
//
//   --seconds N            length of each timed scenario (default 10)
//   --target URL           a running broker to load (its database is left as the bench leaves it)
//   --only a,b             run only these scenarios (names as printed in the first column)
//   --other-partitions N   partitions in 1,000 other queues, written straight into our own
//                          database before the pop-latency and metrics-scrape scenarios (default 100000; ignored
//                          with --target)
//   --parked N             parked polls of the idle-10k scenario (default 10000)
//   --soak MINUTES         instead of the scenarios: steady push/pop/ack with 1,000 parked long
//                          polls for that long, the app's RSS and heap sampled every 10 s
//   --compare URL          the comparison scenarios against this app and the broker at URL, one at a time,
//                          alternated: [--rounds N] (3) [--compare-start CMD] [--compare-stop CMD] (default the
//                          reference broker's start.sh / stop.sh; `none`: already running) [--compare-db NAME]
//                          (its database, for its PostgreSQL CPU; queen_ref); scripts/lib/bench-compare.mjs
//   --node-flags "F ..."   Node.js flags for this app's server (e.g. "--max-semi-space-size=2")
//   --pid PID [--pid-db NAME]  with --target: the target's server process, whose CPU per message (user +
//                          system, /proc) the comparison scenarios named in --only then report, in their
//                          bench-compare.mjs shapes (push-1x2000p, wide-5k-x1-p1 too), with that of the
//                          PostgreSQL backends of database NAME
//   --warm N               before the scenarios, untimed: N batch-1 pushes over N partitions, then their
//                          pops (batch=10&partitions=1) and acks, so that a server started for the
//                          measurement has compiled its hot paths, as a full run's earlier scenarios leave it
//   --only bp-10,part-1,fanout-5x2  (and the other comparison scenarios): only when named, against one broker
//   --only lifecycle-pace  only when named: minutes of load under default options, the job keeping pace
//                          with an earlier hour's due rows ([--minutes N] [--pace-rate N], scripts/lib/bench-pace.mjs)
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from '../db/embedded.mjs';
import { boundedScenarios } from './lib/bench-bounded.mjs';
import { compare, compareScenarioNames, rssOf, runScenariosOnce } from './lib/bench-compare.mjs';
import { lifecycleScenarios } from './lib/bench-lifecycle.mjs';
import { paceScenario } from './lib/bench-pace.mjs';
import { buildIfStale } from './lib/build.mjs';
import { createDatabase, dropDatabase } from './lib/test-db.mjs';

const root = path.join(import.meta.dirname, '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SECONDS = Number(arg('seconds', 10));
const TARGET = arg('target', undefined);
const ONLY = arg('only', undefined)?.split(',');
const OTHER_PARTITIONS = Number(arg('other-partitions', 100_000));
const SOAK_MINUTES = Number(arg('soak', 0));
const RUN = Date.now().toString(36); // queue names of this run, so a --target's earlier data does not interfere

let embedded;
let tmpDir;
let adminUrl;
let db;
let server;
let base = TARGET?.replace(/\/$/, '');
/** While set, gets each request line the server logs (our own server only). */
let serverLog;

/** Node.js flags for this app's server (V8's heap sizing, say), to measure what they cost. */
const NODE_FLAGS = arg('node-flags', '').split(' ').filter(Boolean);
const COMPARE = arg('compare', undefined)?.replace(/\/$/, '');
const TARGET_PID = TARGET ? Number(arg('pid', 0)) || undefined : undefined;
const REFERENCE = path.join(root, '..', 'shared', 'reference', 'queen-cpp');

/** Starts this app's server (scripts/serve.mjs, its own process group) on the bench's database. */
async function startServer() {
  const port = await freePort();
  server = spawn(process.execPath, [...NODE_FLAGS, path.join(root, 'scripts', 'serve.mjs')], {
    cwd: root,
    // the lifecycle job every second, so that the retention scenario measures deletion keeping up
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      NEXT_TELEMETRY_DISABLED: '1',
      RETENTION_INTERVAL_MS: '1000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  // The server logs a JSON line per request (part of what is measured); its warnings and errors show.
  readline.createInterface({ input: server.stdout }).on('line', (line) => {
    if (/"level":"(warn|error|fatal)"/.test(line)) process.stderr.write(`${line}\n`);
    else if (serverLog && line.includes('"status":')) serverLog(line);
  });
  return `http://127.0.0.1:${port}`;
}

/** Stops the server started by startServer (SIGTERM to its group) and waits for it. */
async function stopServer() {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  try {
    process.kill(-server.pid, 'SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  } catch {
    // gone
  }
}

if (!base) {
  buildIfStale();
  adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    if (COMPARE)
      console.warn('[compare] no DATABASE_URL: this app runs on an embedded PostgreSQL, the other broker on its own');
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-bench-pg-'));
    fs.chmodSync(tmpDir, 0o755);
    embedded = await startEmbeddedPostgres(path.join(tmpDir, 'data'));
    adminUrl = embedded.url;
  }
  db = await createDatabase(adminUrl, 'queen_bench');
  // --compare starts and stops it around each of its rounds
  if (!COMPARE) base = await startServer();
}
for (let i = 0; base && i < 600; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break;
  } catch {
    // starting
  }
  await new Promise((r) => setTimeout(r, 100));
}

// No request may hang a scenario (a broker under --target may hold a long poll past its timeout).
const REQUEST_TIMEOUT_MS = 35_000;

const post = async (p, body) => {
  const res = await fetch(base + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${p} answered ${res.status}: ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
};

const serverTimes = [];

/** GET a pop route; the parsed body, or null on 204. Notes the server's own time (Server-Timing) where it says. */
async function pop(pathAndQuery) {
  const res = await fetch(`${base}/api/v1/pop${pathAndQuery}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (res.status === 204) {
    await res.arrayBuffer();
    return null;
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error(`pop answered ${res.status}: ${text.slice(0, 200)}`);
  const dur = res.headers.get('server-timing')?.match(/dur=([\d.]+)/);
  if (dur) serverTimes.push(Number(dur[1]));
  return JSON.parse(text);
}

const ackBatch = (group, messages) =>
  post('/api/v1/ack/batch', {
    consumerGroup: group,
    acknowledgments: messages.map((m) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId || null,
    })),
  });

function percentiles(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(1) : '—';
  return { calls: sorted.length, p50: at(0.5), p99: at(0.99) };
}

/**
 * Runs `workers` loops of `step` for SECONDS; units per second (until the last step that did
 * something, should the work run out first) and the step latencies.
 */
async function timed(workers, step) {
  const started = performance.now();
  const deadline = Date.now() + SECONDS * 1000;
  const latencies = [];
  let units = 0;
  let lastUseful = started;
  const loops = Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (Date.now() < deadline) {
        const t = performance.now();
        const done = await step(w); // not `units += await …`: that reads `units` before awaiting
        units += done;
        if (done > 0) lastUseful = performance.now();
        latencies.push(performance.now() - t);
      }
    }),
  );
  // a step still running 5 s past the deadline (a parked pop a broker holds on to) is not waited for
  let straggling;
  await Promise.race([loops, new Promise((r) => (straggling = setTimeout(r, SECONDS * 1000 + 5000)))]);
  clearTimeout(straggling);
  loops.catch(() => {}); // what a straggler throws later is no longer this scenario's
  return { perSecond: Math.round(units / ((lastUseful - started) / 1000)), ...percentiles(latencies) };
}

/** Pushes `perPartition` messages to each of `partitions` partitions, 1,000 items a call. */
async function fill(queue, partitions, perPartition, payload = () => ({ body: 'x'.repeat(64) })) {
  let items = [];
  for (let m = 0; m < perPartition; m++) {
    for (let p = 0; p < partitions; p++) {
      items.push({ queue, partition: `p${p}`, payload: payload(p, m) });
      if (items.length === 1000) {
        await post('/api/v1/push', { items });
        items = [];
      }
    }
  }
  if (items.length) await post('/api/v1/push', { items });
}

/**
 * Consumers of one group drain `total` messages: each pops (`query`), then acks the batch. The
 * figure is messages per second until the last one is acked; latencies are the pops'.
 */
async function drain(queue, group, consumers, query, total) {
  const popLatencies = [];
  let consumed = 0;
  const started = performance.now();
  const deadline = Date.now() + Math.max(SECONDS, 60) * 1000 * 3;
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      while (consumed < total && Date.now() < deadline) {
        const t = performance.now();
        const body = await pop(`/queue/${encodeURIComponent(queue)}?consumerGroup=${group}&${query}`);
        popLatencies.push(performance.now() - t);
        if (!body) continue;
        await ackBatch(group, body.messages);
        consumed += body.messages.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    perSecond: Math.round(consumed / seconds),
    consumed,
    seconds: seconds.toFixed(1),
    ...percentiles(popLatencies),
  };
}

const results = [];
const report = (name, r, unit, note = '') => {
  results.push({ name, ...r, unit });
  console.log(
    `${name.padEnd(34)} ${String(r.perSecond ?? '').padStart(8)} ${unit.padEnd(6)} ${String(r.calls).padStart(7)} calls   p50 ${String(r.p50).padStart(6)} ms   p99 ${String(r.p99).padStart(6)} ms   ${note}`,
  );
};
// with --pid, a comparison scenario runs in its bench-compare.mjs shape, which reads the CPU
const wanted = (name) => !ONLY || (ONLY.includes(name) && !(TARGET_PID && compareScenarioNames.includes(name)));

let seq = 0;
const batchFor = (queue, partitions, n) =>
  Array.from({ length: n }, (_, i) => ({
    queue,
    partition: `p${(seq + i) % partitions}`,
    payload: { seq: seq++, body: 'x'.repeat(64) },
  }));

let sparse;

/**
 * The 100,000-partition queue of which 100 partitions hold 100 messages each, with a group that
 * started past the rest (and, on our own database, the other queues' partitions): built once.
 */
function sparseQueue() {
  sparse ??= (async () => {
    const q = `bench.sparse.${RUN}`;
    if (db && OTHER_PARTITIONS > 0) await otherPartitions(OTHER_PARTITIONS, 'sparse');
    await fill(q, 100_000, 1);
    await pop(`/queue/${q}?consumerGroup=sparse&subscriptionMode=new&batch=1`); // the group starts past that backlog
    const items = [];
    for (let i = 0; i < 100; i++)
      for (let m = 0; m < 100; m++) items.push({ queue: q, partition: `p${i * 997}`, payload: { m } });
    for (let i = 0; i < items.length; i += 1000) await post('/api/v1/push', { items: items.slice(i, i + 1000) });
    return q;
  })();
  return sparse;
}

/**
 * Writes `count` partitions (one message each) over 1,000 other queues straight into our database,
 * far faster than over HTTP, with `group` a drained group of each: a pop's cost must not depend on them.
 */
async function otherPartitions(count, group) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(
      `
      with q as (
        insert into queen.queues (id, name, namespace, task)
        select queen.uuidv7(), 'other.q' || i, 'other', 'q' || i from generate_series(1, 1000) i
        returning id),
      g as (insert into queen.queue_groups (queue_id, consumer_group) select q.id, $2 from q),
      p as (
        insert into queen.partitions (id, queue_id, name, head_offset, last_push_at)
        select queen.uuidv7(), q.id, 'p' || j, 1, now() from q, generate_series(1, $1::int / 1000) j
        returning id, queue_id),
      s as (insert into queen.segments (partition_id, first_offset, last_offset, created_at) select p.id, 1, 1, now() from p),
      m as (
        insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
        select p.id, 1, queen.uuidv7(), p.id::text, '{"n":1}', 1 from p),
      c as (
        insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset, deliveries)
        select p.id, $2, p.queue_id, 1, 1, 1 from p),
      gs as (
        insert into queen.group_stats (queue_id, consumer_group, shard, committed)
        select p.queue_id, $2, 0, count(*) from p group by p.queue_id)
      insert into queen.queue_stats (queue_id, shard, partitions, messages)
      select p.queue_id, 0, count(*), count(*) from p group by p.queue_id`,
      [count, group],
    );
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

/**
 * Steady load for SOAK_MINUTES: 2 producers (batches of 50 over 16 partitions, ~20 calls/s), 4
 * consumers popping and acking, 1,000 long polls parked on a quiet queue (re-parked as they time
 * out), and every 10 s a sample of the app's memory. A leak shows as a heap that keeps growing.
 */
async function soak() {
  const q = `bench.soak.${RUN}`;
  const quiet = `bench.soak.quiet.${RUN}`;
  const deadline = Date.now() + SOAK_MINUTES * 60_000;
  let pushed = 0;
  let consumed = 0;
  const samples = [];
  const sample = async () => {
    const p = await (await fetch(`${base}/api/dashboard/process`)).json();
    samples.push({
      minute: ((Date.now() - (deadline - SOAK_MINUTES * 60_000)) / 60_000).toFixed(1),
      rss: p.rssBytes,
      heap: p.heapUsedBytes,
      parked: p.parkedPolls,
      pushed,
      consumed,
    });
    const s = samples.at(-1);
    console.log(
      `${s.minute.padStart(6)} min   rss ${(s.rss / 2 ** 20).toFixed(0).padStart(5)} MB   heap ${(s.heap / 2 ** 20).toFixed(0).padStart(5)} MB   parked ${String(s.parked).padStart(5)}   pushed ${s.pushed}   consumed ${s.consumed}`,
    );
  };
  const parked = Array.from({ length: 1000 }, async () => {
    while (Date.now() < deadline)
      await fetch(`${base}/api/v1/pop/queue/${quiet}?wait=true&timeout=30000`)
        .then((r) => r.arrayBuffer())
        .catch(() => {});
  });
  const producers = Array.from({ length: 2 }, async () => {
    while (Date.now() < deadline) {
      await post('/api/v1/push', { items: batchFor(q, 16, 50) });
      pushed += 50;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  const consumers = Array.from({ length: 4 }, async () => {
    while (Date.now() < deadline) {
      const body = await pop(`/queue/${q}?consumerGroup=soak&batch=50&wait=true&timeout=2000`);
      if (!body) continue;
      await ackBatch('soak', body.messages);
      consumed += body.messages.length;
    }
  });
  console.log(`soak: ${SOAK_MINUTES} min, 1,000 parked long polls, steady push/pop/ack`);
  await sample();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10_000));
    await sample();
  }
  await Promise.all([...producers, ...consumers, ...parked]);
  await new Promise((r) => setTimeout(r, 10_000));
  await sample(); // 10 s after the load stopped
  const out = arg('json', undefined);
  if (out) fs.writeFileSync(out, JSON.stringify({ soakMinutes: SOAK_MINUTES, samples }, null, 2));
}

/** --warm N: the one-message shapes, untimed (see the usage above). */
async function warmUp(n) {
  const q = `bench.warm.${RUN}`;
  let pushed = 0;
  let consumed = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (pushed < n) {
        const item = { queue: q, partition: `p${pushed++}`, payload: { body: 'x'.repeat(64) } };
        await post('/api/v1/push', { items: [item] });
      }
    }),
  );
  const deadline = Date.now() + 60_000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (consumed < n && Date.now() < deadline) {
        // an empty pop may be a 204 or (another broker's) 200 without messages; an empty ack is never sent
        const messages = (await pop(`/queue/${q}?consumerGroup=warm&batch=10&partitions=1`))?.messages ?? [];
        if (messages.length === 0) continue;
        await ackBatch('warm', messages);
        consumed += messages.length;
      }
    }),
  );
}

/** The scenarios, each printed as it finishes. */
async function scenarios() {
  const warm = Number(arg('warm', 0));
  if (warm > 0) await warmUp(warm);
  console.log(
    `bench: ${SECONDS} s per timed scenario, ${os.cpus().length} cores, ${TARGET ? `target ${TARGET}` : `this app, PostgreSQL ${embedded ? 'embedded' : 'from DATABASE_URL'}`}`,
  );
  console.log(`${'scenario'.padEnd(34)} ${'rate'.padStart(8)} ${'unit'.padEnd(6)} ${'calls'.padStart(7)}`);

  if (wanted('push-8x100')) {
    const q = `bench.push.${RUN}`;
    report(
      'push-8x100',
      await timed(8, async () => (await post('/api/v1/push', { items: batchFor(q, 8, 100) })).length),
      'msg/s',
      'batches of 100 over 8 partitions, 8 connections',
    );
  }
  // The same pushes to a queue whose retention deletes everything older than 2 s while they run:
  // how much the deletion costs the pushes, and whether it keeps up (what the queue still stores).
  if (wanted('push-8x100-retention')) {
    const q = `bench.retain.${RUN}`;
    await post('/api/v1/configure', { queue: q, options: { retentionEnabled: true, retentionSeconds: 2 } });
    const r = await timed(8, async () => (await post('/api/v1/push', { items: batchFor(q, 8, 100) })).length);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // one more run of the job after the last push
    const page = await (await fetch(`${base}/api/dashboard/queues/${q}`)).json().catch(() => undefined);
    const base8 = results.find((x) => x.name === 'push-8x100')?.perSecond;
    report(
      'push-8x100-retention',
      r,
      'msg/s',
      `the same into a queue keeping 2 s${base8 ? `: ${Math.round((1 - r.perSecond / base8) * 100)}% slower than push-8x100` : ''}${page?.queue ? `; stores ${page.queue.storage.stored} messages 3 s after the last push` : ''}`,
    );
  }
  // How most producers push: one message a call, here from 8 connections over 2,000 partitions.
  if (wanted('push-1x2000p')) {
    const q = `bench.push1.${RUN}`;
    let n = 0;
    report(
      'push-1x2000p',
      await timed(8, async () => {
        const item = { queue: q, partition: `p${n++ % 2000}`, payload: { body: 'x'.repeat(64) } };
        return (await post('/api/v1/push', { items: [item] })).length;
      }),
      'msg/s',
      'batch-1 pushes over 2,000 partitions, 8 connections',
    );
  }
  if (wanted('push-wide')) {
    const q = `bench.pushwide.${RUN}`;
    report(
      'push-wide',
      await timed(4, async () => (await post('/api/v1/push', { items: batchFor(q, 500, 500) })).length),
      'msg/s',
      '500 items over 500 partitions a call, 4 connections',
    );
  }
  for (const [name, partitions] of [
    ['popack-8p', 8],
    ['popack-1p', 1],
  ]) {
    if (!wanted(name)) continue;
    const q = `bench.${name}.${RUN}`;
    const backlog = 150_000;
    for (let sent = 0; sent < backlog; sent += 1000)
      await post('/api/v1/push', { items: batchFor(q, partitions, 1000) });
    report(
      name,
      await timed(4, async () => {
        const body = await pop(`/queue/${q}?consumerGroup=bench&batch=100&wait=true&timeout=2000`);
        if (!body) return 0;
        await ackBatch('bench', body.messages);
        return body.messages.length;
      }),
      'msg/s',
      `pop + batch ack, batch 100, 4 consumers, ${partitions} partition${partitions > 1 ? 's' : ''}`,
    );
  }
  if (wanted('autoack-8p')) {
    const q = `bench.autoack.${RUN}`;
    for (let sent = 0; sent < 200_000; sent += 1000) await post('/api/v1/push', { items: batchFor(q, 8, 1000) });
    report(
      'autoack-8p',
      await timed(8, async () => {
        const body = await pop(`/queue/${q}?consumerGroup=auto&batch=100&autoAck=true&wait=true&timeout=2000`);
        return body ? body.messages.length : 0;
      }),
      'msg/s',
      'autoAck pops, batch 100, 8 consumers, 8 partitions',
    );
  }

  // Wide queues: P partitions × M messages, drained by 8 consumers with batch=10.
  for (const [partitions, perPartition, cap] of [
    [5000, 1, 1],
    [5000, 1, 10],
    [50000, 1, 1],
  ]) {
    const name = `wide-${partitions / 1000}k-x${perPartition}-p${cap}`;
    if (!wanted(name)) continue;
    const q = `bench.${name}.${RUN}`;
    await fill(q, partitions, perPartition);
    report(
      name,
      await drain(q, 'wide', 8, `batch=10&partitions=${cap}`, partitions * perPartition),
      'msg/s',
      `${partitions} partitions × ${perPartition}, 8 consumers, batch=10, partitions=${cap}, pop + ack`,
    );
  }

  // Pop latency on a 100,000-partition queue of which 100 hold messages, one consumer at a time.
  if (wanted('pop-latency-100k')) {
    const q = await sparseQueue();
    const popLatencies = [];
    serverTimes.length = 0;
    const r = await timed(1, async () => {
      const t = performance.now();
      const body = await pop(`/queue/${q}?consumerGroup=sparse&batch=1`);
      popLatencies.push(performance.now() - t);
      if (!body) return 0;
      await ackBatch('sparse', body.messages);
      return 1;
    });
    const server = percentiles(serverTimes);
    report(
      'pop-latency-100k',
      { ...r, ...percentiles(popLatencies) },
      'pop/s',
      `100,000 partitions, 100 busy, one consumer popping batch=1 then acking (latency: the pop alone; server time p50 ${server.p50} ms, p99 ${server.p99} ms)${db && OTHER_PARTITIONS ? `; ${OTHER_PARTITIONS.toLocaleString('en')} partitions in 1,000 other queues` : ''}`,
    );
  }

  // A Prometheus scrape with the 100,000-partition queue (and its group) in the database.
  if (wanted('metrics-scrape-100k')) {
    await sparseQueue();
    const latencies = [];
    const queries = [];
    let bytes = 0;
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      const res = await fetch(`${base}/metrics/prometheus`);
      bytes = (await res.text()).length;
      if (res.status !== 200) throw new Error(`/metrics/prometheus answered ${res.status}`);
      latencies.push(performance.now() - t);
      queries.push(Number(/figures;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1] ?? NaN));
    }
    const query = percentiles(queries.filter((q) => !Number.isNaN(q)));
    report(
      'metrics-scrape-100k',
      { perSecond: '', ...percentiles(latencies) },
      '',
      `GET /metrics/prometheus, one after another, ${bytes.toLocaleString('en')} bytes (the figures query: p50 ${query.p50} ms, p99 ${query.p99} ms); ` +
        `100,000-partition queue${db && OTHER_PARTITIONS ? ` and ${OTHER_PARTITIONS.toLocaleString('en')} partitions in 1,000 other queues, each with a group` : ''}`,
    );
  }

  if (wanted('wake-up')) {
    const latencies = [];
    const q = `bench.wake.${RUN}`;
    for (let i = 0; i < 50; i++) {
      const parked = pop(`/queue/${q}?wait=true&timeout=10000&autoAck=true`);
      await new Promise((r) => setTimeout(r, 20));
      const t = performance.now();
      await post('/api/v1/push', { items: [{ queue: q, payload: i }] });
      await parked;
      latencies.push(performance.now() - t);
    }
    report(
      'wake-up',
      { perSecond: '', ...percentiles(latencies) },
      '',
      'push sent → parked pop answered (same instance)',
    );
  }
  // Streaming-query cycles (the streams SDKs' loop): pop 10 for the query's group, read the
  // shard's state, commit 11 state upserts + 10 sink pushes + the ack in one cycle.
  if (wanted('streams-cycle')) {
    const q = `bench.streams.${RUN}`;
    const { query_id: queryId } = await post('/streams/v1/queries', {
      name: q,
      source_queue: q,
      sink_queue: `${q}.sink`,
      config_hash: 'b'.repeat(64),
    });
    await fill(q, 16, 2000, (p, m) => ({ m }));
    const group = `streams.${q}`;
    const r = await timed(4, async () => {
      const batch = await pop(`/queue/${q}?consumerGroup=${group}&batch=10`);
      if (!batch) return 0;
      const state = await post('/streams/v1/state/get', {
        query_id: queryId,
        partition_id: batch.partitionId,
        keys: ['count'],
      });
      const last = batch.messages[batch.messages.length - 1];
      const res = await post('/streams/v1/cycle', {
        query_id: queryId,
        partition_id: batch.partitionId,
        consumer_group: group,
        state_ops: [
          { type: 'upsert', key: 'count', value: (state.rows[0]?.value ?? 0) + batch.messages.length },
          ...batch.messages.map((m) => ({ type: 'upsert', key: `w\u001f${m.data.m}`, value: { windowEnd: m.data.m } })),
        ],
        push_items: batch.messages.map((m) => ({ queue: `${q}.sink`, payload: m.data })),
        ack: { transactionId: last.transactionId, leaseId: last.leaseId },
      });
      if (!res.success) throw new Error(`cycle refused: ${res.error}`);
      return batch.messages.length;
    });
    report(
      'streams-cycle',
      r,
      'msg/s',
      'pop 10 → state/get → cycle (11 upserts, 10 sink pushes, ack), 4 workers; latency: the whole loop',
    );
  }
  // The lifecycle job on our own database (not measurable against a --target).
  if (db && (wanted('lifecycle-idle-100k') || wanted('lifecycle-work'))) {
    await lifecycleScenarios({ url: db.url, run: RUN, report, wanted });
  }
  if (db && ONLY?.includes('lifecycle-pace'))
    await paceScenario({ url: db.url, base, run: RUN, post, pop, ackBatch, batchFor, report });
  // Reads a low role can make, at size (our own database: set up in SQL): scripts/lib/bench-bounded.mjs
  if (db) await boundedScenarios({ url: db.url, base, run: RUN, report, wanted, post });
  if (wanted('idle-10k')) await idle10k();
  // The comparison's own scenarios (bp-10, part-1, fanout-5x2, ...), only when named: rates, and
  // with our own server its CPU per message and memory (scripts/lib/bench-compare.mjs).
  const named = ONLY?.filter((n) => compareScenarioNames.includes(n) && !results.some((r) => r.name === n)) ?? [];
  if (named.length) {
    const idle = server ? rssOf(server.pid) : undefined;
    const rows = await runScenariosOnce({
      base,
      pid: server?.pid ?? TARGET_PID,
      db: db?.name ?? arg('pid-db', undefined),
      seconds: SECONDS,
      tag: RUN,
      names: named,
    });
    for (const r of rows) results.push({ name: `${r.scenario}${r.label ? ` ${r.label}` : ''}`, ...r });
    if (server) {
      const after = rssOf(server.pid);
      console.log(
        `server RSS: ${idle.rss.toFixed(0)} MB before, ${after.rss.toFixed(0)} MB after, peak ${after.peak.toFixed(0)} MB`,
      );
    }
  }
  const out = arg('json', undefined);
  if (out) fs.writeFileSync(out, JSON.stringify({ target: TARGET ?? 'this app', seconds: SECONDS, results }, null, 2));
}

/** The database's committed and rolled-back transactions per second over `seconds` (our own database only). */
async function transactionRate(seconds) {
  if (!db) return undefined;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const count = async () =>
      Number(
        (
          await client.query(
            'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
          )
        ).rows[0].n,
      );
    // statistics reach pg_stat_database within a second of a transaction (idle backends within 10 s)
    await new Promise((r) => setTimeout(r, 1500));
    const before = await count();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const after = await count();
    return Math.round((after - before - 1) / seconds);
  } finally {
    await client.end();
  }
}

const processFacts = async () => (await fetch(`${base}/api/dashboard/process`)).json();

/**
 * Issue 18: 10,000 long polls (`wait=true&timeout=170000&autoAck=true&batch=1`, one queue, one
 * group) ramped at 1,000 a second: how many are refused or lose their connection, what the
 * database does while they wait with nothing pushed (against nothing parked), a push of 100
 * messages and when its 100 answers come, push → answer with 1 and with 10,000 parked, and RSS.
 */
async function idle10k() {
  const COUNT = Number(arg('parked', 10_000));
  const RAMP = 1000; // per second
  const q = `bench.idle.${RUN}`;
  const seconds = Math.max(5, Math.min(SECONDS, 10));
  const pollUrl = (queue) => `${base}/api/v1/pop/queue/${queue}?wait=true&timeout=170000&autoAck=true&batch=1`;
  const note = (name, value, text) => {
    results.push({ name, ...value });
    console.log(`${name.padEnd(34)} ${text}`);
  };

  // For reference, on this machine now: a push alone, answered.
  const alone = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    await post('/api/v1/push', { items: [{ queue: `bench.idle0.${RUN}`, payload: i }] });
    alone.push(performance.now() - t);
  }
  const ref = percentiles(alone);
  note(
    'idle-10k push alone (reference)',
    ref,
    `p50 ${ref.p50} ms   p99 ${ref.p99} ms   (50 single-message pushes, nothing parked: what any push → answer figure includes)`,
  );

  // One parked poll: push → answer, one message at a time.
  const single = [];
  const q1 = `bench.idle1.${RUN}`;
  for (let i = 0; i < 50; i++) {
    const parked = fetch(pollUrl(q1)).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 20));
    const t = performance.now();
    await post('/api/v1/push', { items: [{ queue: q1, payload: i }] });
    await parked;
    single.push(performance.now() - t);
  }
  const one = percentiles(single);
  note(
    'idle-10k push→answer, 1 parked',
    one,
    `p50 ${one.p50} ms   p99 ${one.p99} ms   (${one.calls} single-message pushes, push sent → the parked poll answered)`,
  );

  const idleRate = await transactionRate(seconds);

  // The ramp.
  const controller = new AbortController();
  setMaxListeners(COUNT + 100, controller.signal); // one abort listener per poll
  const answers = []; // { at, status, body }
  let waitingForAnswer;
  let refused = 0;
  let connectionErrors = 0;
  const errors = new Map();
  const polls = [];
  const rampStarted = performance.now();
  for (let i = 0; i < COUNT; i++) {
    polls.push(
      fetch(pollUrl(q), { signal: controller.signal })
        .then(async (res) => {
          const text = await res.text();
          const at = performance.now();
          if (res.status !== 200 && res.status !== 204) refused++;
          answers.push({ at, status: res.status, text });
          waitingForAnswer?.(at);
        })
        .catch((err) => {
          if (controller.signal.aborted) return;
          connectionErrors++;
          const code = err.cause?.code ?? err.code ?? err.message;
          errors.set(code, (errors.get(code) ?? 0) + 1);
        }),
    );
    const due = rampStarted + ((i + 1) * 1000) / RAMP;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const rampSeconds = (performance.now() - rampStarted) / 1000;
  let facts = await processFacts();
  for (let i = 0; i < 300 && facts.parkedPolls < COUNT - refused - connectionErrors; i++) {
    await new Promise((r) => setTimeout(r, 100));
    facts = await processFacts();
  }
  note(
    'idle-10k ramp',
    { parked: facts.parkedPolls, refused, connectionErrors },
    `${COUNT.toLocaleString('en')} polls in ${rampSeconds.toFixed(1)} s: ${facts.parkedPolls} parked, ${refused} refused, ${connectionErrors} connection errors${errors.size ? ` (${[...errors].map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}, ${answers.length} answered early`,
  );

  const parkedRate = await transactionRate(seconds);
  facts = await processFacts();
  note(
    'idle-10k idle transactions',
    { idleRate, parkedRate },
    idleRate === undefined
      ? '(only on our own database)'
      : `${idleRate}/s with none parked, ${parkedRate}/s with ${facts.parkedPolls} parked (+${parkedRate - idleRate}/s), over ${seconds} s each`,
  );
  note(
    'idle-10k RSS',
    { rssMb: Math.round(facts.rssBytes / 2 ** 20) },
    `${Math.round(facts.rssBytes / 2 ** 20)} MB with ${facts.parkedPolls} parked (heap ${Math.round(facts.heapUsedBytes / 2 ** 20)} MB), ${facts.parkedScopes} scope(s)`,
  );

  // A push of 100 messages. Our own server's request log tells when it answered each request:
  // the client's figures add the time this process takes to read 10,000 sockets' worth of answers.
  const logged = [];
  serverLog = (line) => {
    const r = JSON.parse(line);
    if (r.route === '/api/v1/push' || (r.route?.startsWith('/api/v1/pop') && r.status === 200))
      logged.push({ route: r.route, at: Date.parse(r.time) });
  };
  const before = answers.length;
  const items = Array.from({ length: 100 }, (_, i) => ({ queue: q, partition: `p${i % 10}`, payload: { i } }));
  const sent = performance.now();
  await post('/api/v1/push', { items });
  const pushAnswered = performance.now();
  for (let i = 0; i < 1000 && answers.length - before < 100; i++) await new Promise((r) => setTimeout(r, 10));
  const got = answers.slice(before);
  const payloads = new Set(got.filter((a) => a.status === 200).map((a) => JSON.parse(a.text).messages[0].data.i));
  const lastAt = Math.max(...got.map((a) => a.at));
  await new Promise((r) => setTimeout(r, 200)); // the last log lines
  serverLog = undefined;
  const pushLogged = logged.find((l) => l.route === '/api/v1/push')?.at;
  const popsLogged = logged.filter((l) => l.route !== '/api/v1/push').map((l) => l.at);
  const serverNote =
    pushLogged && popsLogged.length
      ? `; by the server's log: ${popsLogged.length} answered, the last ${Math.max(...popsLogged) - pushLogged} ms after the push's answer`
      : '';
  const latencies = percentiles(got.map((a) => a.at - sent));
  note(
    'idle-10k push of 100',
    { answered: got.length, distinct: payloads.size, lastAfterPushMs: Math.round(lastAt - pushAnswered), ...latencies },
    `${got.length} answered (${payloads.size} distinct messages), the push answered in ${(pushAnswered - sent).toFixed(1)} ms, the last poll ${(lastAt - pushAnswered).toFixed(1)} ms after it; push sent → answer p50 ${latencies.p50} ms, p99 ${latencies.p99} ms${serverNote}`,
  );

  // Single messages with ~10,000 parked.
  const many = [];
  for (let i = 0; i < 50; i++) {
    const answered = new Promise((resolve) => (waitingForAnswer = resolve));
    const t = performance.now();
    await post('/api/v1/push', { items: [{ queue: q, payload: { i: 1000 + i } }] });
    many.push((await answered) - t);
    waitingForAnswer = undefined;
  }
  const m = percentiles(many);
  facts = await processFacts();
  note(
    `idle-10k push→answer, ${facts.parkedPolls} parked`,
    m,
    `p50 ${m.p50} ms   p99 ${m.p99} ms   (${m.calls} single-message pushes; claims per wake-up ${facts.claimsPerWakeUp}, wake-ups ${JSON.stringify(facts.wakeUps)})`,
  );

  controller.abort();
  await Promise.all(polls);
}

/**
 * --compare URL: the comparison scenarios (scripts/lib/bench-compare.mjs) against this app and the
 * broker at URL, one loaded at a time: this app's server is started and stopped around its runs,
 * the other broker by --compare-start / --compare-stop (shell commands; by default the reference
 * broker's start.sh and stop.sh, `none` for a broker left running), --rounds times, alternated.
 */
async function compareRun() {
  const names = ONLY?.filter((n) => compareScenarioNames.includes(n)) ?? compareScenarioNames;
  const unknown = ONLY?.filter((n) => !compareScenarioNames.includes(n)) ?? [];
  if (unknown.length) console.warn(`[compare] not a comparison scenario, skipped: ${unknown.join(', ')}`);
  const command = (name, script) => {
    const given = arg(name, undefined);
    if (given === 'none') return undefined;
    return given ?? path.join(REFERENCE, script);
  };
  const rounds = Number(arg('rounds', 3));
  console.log(
    `compare: this app against ${COMPARE}, ${names.join(', ')}; ${SECONDS} s each, ${rounds} round(s), ${os.cpus().length} cores, this app's PostgreSQL ${embedded ? 'embedded' : 'from DATABASE_URL'}`,
  );
  const { table } = await compare({
    names,
    seconds: SECONDS,
    rounds,
    run: RUN,
    ours: {
      start: async () => ({ base: await startServer(), pid: server.pid, db: db.name }),
      stop: stopServer,
    },
    other: {
      base: COMPARE,
      start: command('compare-start', 'start.sh'),
      stop: command('compare-stop', 'stop.sh'),
      // the reference's database and run folder (start.sh's defaults), for its CPU and its pid
      db: arg('compare-db', process.env.PG_DB ?? 'queen_ref'),
      runDir: process.env.RUN_DIR ?? path.join(process.env.TMPDIR ?? '/tmp', 'queen-ref-run'),
    },
  });
  const out = arg('json', undefined);
  if (out) fs.writeFileSync(out, JSON.stringify({ compare: COMPARE, seconds: SECONDS, rounds, table }, null, 2));
}

try {
  if (COMPARE) await compareRun();
  else if (SOAK_MINUTES > 0) await soak();
  else await scenarios();
} finally {
  // its database is dropped only once it has stopped (else its connections are cut under it)
  await stopServer();
  if (db) await dropDatabase(adminUrl, db.name).catch(() => {});
  await embedded?.stop();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
