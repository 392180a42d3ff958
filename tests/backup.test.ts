// docs/operations.md's backup: `pg_dump -Fc` of a database in use (an app serving it, traffic
// running during the dump) restores with `pg_restore` into an empty database that a fresh app
// boots on and serves the same messages from: the same queue, the same payloads, the same leases
// in flight, the same committed cursors. Skipped, saying so, where pg_dump/pg_restore are missing
// or older than the server.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase } from '../scripts/lib/test-db.mjs';
import { startApp, type TestApp } from './support/app';
import { client } from './support/http';
import { startServer, type TestServer } from './support/server';

const run = promisify(execFile);
const bin = (name: string) =>
  [
    process.env.PG_BIN && path.join(process.env.PG_BIN, name),
    `/usr/bin/${name}`,
    `/usr/lib/postgresql/15/bin/${name}`,
  ].find((p) => p && fs.existsSync(p));
const pgDump = bin('pg_dump');
const pgRestore = bin('pg_restore');
const adminUrl = () => process.env.TEST_ADMIN_DATABASE_URL as string;
if (!pgDump || !pgRestore)
  console.warn('tests/backup.test.ts skipped: pg_dump or pg_restore not found (set PG_BIN to their folder)');

describe.skipIf(!pgDump || !pgRestore)('a pg_dump of a database in use', () => {
  let app: TestApp;
  let restored: { name: string; url: string } | undefined;
  let server: TestServer | undefined;
  const dumpFile = path.join(os.tmpdir(), `queen-backup-${process.pid}.dump`);

  beforeAll(async () => {
    app = await startApp({ LOG_LEVEL: 'warn' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (restored) await dropDatabase(adminUrl(), restored.name);
    await app?.stop();
    fs.rmSync(dumpFile, { force: true });
  });

  it('restores into a database that serves the same messages', async (ctx) => {
    // pg_dump refuses a server newer than itself (the embedded PostgreSQL of `npm test` is newer
    // than Debian's client tools): then this test can only say so; with DATABASE_URL on a server
    // of pg_dump's version (or older) it runs.
    const dumpMajor = Number(/(\d+)/.exec((await run(pgDump!, ['--version'])).stdout)?.[1]);
    const [{ v }] = await app.db.query<{ v: number }>("select current_setting('server_version_num')::int as v");
    const serverMajor = Math.floor(Number(v) / 10000);
    if (serverMajor > dumpMajor) {
      console.warn(
        `tests/backup.test.ts skipped: pg_dump ${dumpMajor} cannot dump PostgreSQL ${serverMajor} (set PG_BIN to a pg_dump ${serverMajor}, or DATABASE_URL to a server of version ${dumpMajor})`,
      );
      ctx.skip();
    }
    const { api } = app;
    await api.post('/api/v1/configure', { queue: 'backup.q', options: { leaseTime: 600 } });
    const items = Array.from({ length: 30 }, (_, i) => ({
      queue: 'backup.q',
      partition: `p${i % 3}`,
      payload: { i, text: `message ${i}` },
      transactionId: `b-${i}`,
    }));
    expect((await api.push(items)).status).toBe(201);
    // a lease acked, one left in flight, in queue mode
    const first = await api.get('/api/v1/pop/queue/backup.q/partition/p0?batch=5&wait=false');
    expect(first.status).toBe(200);
    const acks = first.body.messages.map((m: { transactionId: string }) => ({
      transactionId: m.transactionId,
      partitionId: first.body.partitionId,
      leaseId: first.body.leaseId,
      status: 'completed',
    }));
    expect((await api.post('/api/v1/ack/batch', { acknowledgments: acks })).status).toBe(200);
    const inFlight = await api.get('/api/v1/pop/queue/backup.q/partition/p1?batch=4&wait=false');
    expect(inFlight.status).toBe(200);

    // traffic on another queue for as long as the dump runs
    let busy = true;
    let busyPushes = 0;
    const traffic = (async () => {
      for (let n = 0; busy; n++) {
        await api.push([{ queue: 'backup.busy', payload: { n }, transactionId: `busy-${n}` }]);
        const got = await api.get('/api/v1/pop/queue/backup.busy?wait=false');
        if (got.status === 200)
          await api.post('/api/v1/ack', {
            transactionId: got.body.messages[0].transactionId,
            partitionId: got.body.partitionId,
            leaseId: got.body.leaseId,
            status: 'completed',
          });
        busyPushes++;
      }
    })();
    while (busyPushes < 3) await new Promise((r) => setTimeout(r, 10));
    await run(pgDump!, ['-Fc', '-f', dumpFile, '-d', app.db.url]);
    busy = false;
    await traffic;

    restored = await createDatabase(adminUrl(), 'queen_restored');
    await run(pgRestore!, ['--no-owner', '--exit-on-error', '-d', restored.url, dumpFile]);
    server = await startServer(restored.url, { LOG_LEVEL: 'warn' });
    const copy = client(server.url);
    expect((await copy.get('/ready')).status).toBe(200);

    // the queue as it was: the same messages, partitions and counts
    const queue = async (c: typeof api) => {
      const res = await c.get('/api/v1/resources/queues/backup.q');
      expect(res.status).toBe(200);
      return {
        options: res.body.options,
        partitions: res.body.partitions.map((p: { name: string; headOffset: unknown }) => [p.name, p.headOffset]),
      };
    };
    expect(await queue(copy)).toEqual(await queue(api));
    // a new group reads every message, with its payload, from both
    const readAll = async (c: typeof api) => {
      const seen: Record<string, unknown> = {};
      for (let round = 0; round < 10; round++) {
        const res = await c.get(
          '/api/v1/pop/queue/backup.q?batch=100&partitions=0&wait=false&consumerGroup=audit&autoAck=true',
        );
        if (res.status === 204) break;
        for (const m of res.body.messages) seen[m.transactionId] = m.data;
      }
      return seen;
    };
    const fromCopy = await readAll(copy);
    expect(Object.keys(fromCopy)).toHaveLength(30);
    expect(fromCopy).toEqual(await readAll(api));
    // queue mode goes on where it was: p0's acked five done, p1 still leased to its holder, the rest to go
    expect(await readAll(copy)).toEqual({}); // the audit group's cursors were committed in the copy
    const queueMode = async (c: typeof api) => {
      const ids: string[] = [];
      for (let round = 0; round < 10; round++) {
        const res = await c.get('/api/v1/pop/queue/backup.q?batch=100&partitions=0&wait=false&autoAck=true');
        if (res.status === 204) break;
        ids.push(...res.body.messages.map((m: { transactionId: string }) => m.transactionId));
      }
      return ids.sort();
    };
    const acked = new Set(first.body.messages.map((m: { transactionId: string }) => m.transactionId));
    const expected = items
      .filter((i) => i.partition !== 'p1' && !acked.has(i.transactionId))
      .map((i) => i.transactionId)
      .sort();
    expect(expected).toHaveLength(15);
    expect(await queueMode(copy)).toEqual(expected);
    // the lease in flight at the dump is the same lease in the copy: its holder may still ack it
    const ack = await copy.post('/api/v1/ack', {
      transactionId: inFlight.body.messages[0].transactionId,
      partitionId: inFlight.body.partitionId,
      leaseId: inFlight.body.leaseId,
      status: 'completed',
    });
    expect(ack.status).toBe(200);
    expect(ack.body[0].success).toBe(true);
  }, 120_000);
});
