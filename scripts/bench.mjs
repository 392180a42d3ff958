// `npm run bench`: starts the built app on a fresh database and measures the broker's hot paths
// from outside, over HTTP. Figures are printed, never asserted.
//   node scripts/bench.mjs [--seconds N]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startEmbeddedPostgres } from '../db/embedded.mjs';
import { buildIfStale } from './lib/build.mjs';
import { createDatabase, dropDatabase } from './lib/test-db.mjs';

const root = path.join(import.meta.dirname, '..');
const secondsArg = process.argv.indexOf('--seconds');
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 10;

buildIfStale();

let embedded;
let tmpDir;
let adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-bench-pg-'));
  fs.chmodSync(tmpDir, 0o755);
  embedded = await startEmbeddedPostgres(path.join(tmpDir, 'data'));
  adminUrl = embedded.url;
}
const db = await createDatabase(adminUrl, 'queen_bench');
const port = await freePort();
const server = spawn(path.join(root, 'node_modules', '.bin', 'next'), ['start', '-H', '127.0.0.1', '-p', String(port)], {
  cwd: root,
  env: { ...process.env, DATABASE_URL: db.url, NEXT_TELEMETRY_DISABLED: '1' },
  stdio: 'ignore',
  detached: true,
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 600; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break;
  } catch {
    // starting
  }
  await new Promise((r) => setTimeout(r, 100));
}

const post = (p, body) =>
  fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Runs `workers` loops of `step` for SECONDS; returns completed units per second and latencies. */
async function run(workers, step) {
  const deadline = Date.now() + SECONDS * 1000;
  const latencies = [];
  let units = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (Date.now() < deadline) {
        const t = performance.now();
        const done = await step(w); // not `units += await …`: that reads `units` before awaiting
        units += done;
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(1);
  return { perSecond: Math.round(units / SECONDS), calls: latencies.length, p50: pct(0.5), p99: pct(0.99) };
}

const report = (name, r, unit) =>
  console.log(`${name.padEnd(44)} ${String(r.perSecond).padStart(8)} ${unit}/s   ${r.calls} calls   p50 ${r.p50} ms   p99 ${r.p99} ms`);

const results = {};
try {
  console.log(`bench: ${SECONDS} s per scenario, ${os.cpus().length} cores, PostgreSQL ${embedded ? 'embedded' : 'from DATABASE_URL'}`);
  let seq = 0;
  const batch = (queue, partitions, n) =>
    Array.from({ length: n }, (_, i) => ({ queue, partition: `p${(seq + i) % partitions}`, payload: { seq: seq++, body: 'x'.repeat(64) } }));

  results.push8x100 = await run(8, async () => {
    const res = await post('/api/v1/push', { items: batch('bench.push', 8, 100) });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`push answered ${res.status}`);
    return 100;
  });
  report('push: batches of 100, 8 connections', results.push8x100, 'msg');

  // Pop + ack: 8 long-polling consumers of one group over 8 partitions, batches of up to 100, one batch ack each.
  const backlog = Math.max(200_000, results.push8x100.perSecond * SECONDS * 2);
  for (let sent = 0; sent < backlog; sent += 1000) {
    await post('/api/v1/push', { items: batch('bench.popack', 8, 1000) }).then((r) => r.arrayBuffer());
  }
  results.popAck = await run(8, async () => {
    const res = await fetch(`${base}/api/v1/pop/queue/bench.popack?consumerGroup=bench&batch=100&wait=true&timeout=2000`);
    if (res.status === 204) return 0;
    const body = await res.json();
    const acked = await post('/api/v1/ack/batch', {
      consumerGroup: 'bench',
      acknowledgments: body.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId })),
    });
    await acked.arrayBuffer();
    return body.messages.length;
  });
  report('pop + batch ack: batch 100, 8 consumers', results.popAck, 'msg');

  // autoAck pops: the at-most-once fast path.
  results.autoAck = await run(8, async () => {
    const res = await fetch(`${base}/api/v1/pop/queue/bench.popack?consumerGroup=auto&batch=100&autoAck=true&wait=true&timeout=2000`);
    if (res.status === 204) return 0;
    return (await res.json()).messages.length;
  });
  report('pop autoAck: batch 100, 8 consumers', results.autoAck, 'msg');

  // Wake-up latency: from sending a push to the parked pop's answer, one message at a time.
  const latencies = [];
  for (let i = 0; i < 50; i++) {
    const parked = fetch(`${base}/api/v1/pop/queue/bench.wake?wait=true&timeout=10000&autoAck=true`).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 20));
    const t = performance.now();
    await post('/api/v1/push', { items: [{ queue: 'bench.wake', payload: i }] }).then((r) => r.arrayBuffer());
    await parked;
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  console.log(`${'wake-up: push sent → parked pop answered'.padEnd(44)} p50 ${latencies[25].toFixed(1)} ms   p99 ${latencies[49].toFixed(1)} ms   (50 samples, same instance)`);
} finally {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // gone
  }
  await new Promise((r) => setTimeout(r, 500));
  await dropDatabase(adminUrl, db.name).catch(() => {});
  await embedded?.stop();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
