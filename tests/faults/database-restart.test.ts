// Fault: PostgreSQL stopped and started under load (a throwaway embedded server this test owns).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../db/embedded.mjs';
import type { TestDatabase } from '../support/db';
import { startServer, type TestServer } from '../support/server';
import { allCommitted, checkInvariants, report, startConsumer, until } from './support';

const QUEUE = 'faults.outage';

describe('faults: the database stops and starts under load', () => {
  let dir: string;
  let postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
  let server: TestServer;
  let db: TestDatabase;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-outage-'));
    fs.chmodSync(dir, 0o755);
    postgres = await startEmbeddedPostgres(path.join(dir, 'data'), { fast: true });
    server = await startServer(postgres.url, { DB_POOL_ACQUIRE_TIMEOUT_MS: '500', LOG_LEVEL: 'debug' });
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
    pool.on('error', () => {});
    db = {
      name: 'postgres',
      url: postgres.url,
      pool,
      query: async (text, values) => (await pool.query(text, values)).rows,
      drop: async () => {},
    };
  });
  afterAll(async () => {
    await server?.stop();
    await db?.pool.end();
    await postgres?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('no accepted push is lost, the app recovers by itself, consumers finish', async () => {
    const log = path.join(dir, 'consumers.log');
    const consumers = [0, 1].map(() => startConsumer(server.url, QUEUE, 'g', log, { leaseSeconds: 2 }));
    let seq = 0;
    let accepted = 0;
    let failedCalls = 0;
    let producing = true;
    let firstAcceptedAfterRestart: number | undefined;
    let restartedAt: number | undefined;
    const producer = (async () => {
      while (producing) {
        const items = Array.from({ length: 10 }, () => ({
          queue: QUEUE,
          partition: `p${seq % 4}`,
          payload: { seq },
          transactionId: `o-${seq++}`,
        }));
        // retried with the same transaction ids until accepted: exactly once, whatever the outage did
        for (;;) {
          const res = await fetch(`${server.url}/api/v1/push`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ items }),
          }).catch(() => undefined);
          if (res?.status === 201) {
            await res.arrayBuffer();
            accepted += items.length;
            if (restartedAt && !firstAcceptedAfterRestart) firstAcceptedAfterRestart = Date.now();
            break;
          }
          failedCalls++;
          if (res) expect(res.headers.get('retry-after'), `${res.status} says when to retry`).toBe('1');
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 1500));
      // a long poll parked on a quiet queue rides the outage out, and gets what is pushed after it
      const parked = fetch(`${server.url}/api/v1/pop/queue/faults.quiet?wait=true&timeout=15000`).then(async (r) => ({
        status: r.status,
        body: r.status === 200 ? await r.json() : null,
      }));
      // parked with its first claim done, not still claiming: a pop whose first claim the stop cuts answers
      // its error at once (the consumers park too, so the gauge of parked pops alone cannot tell)
      await until(
        async () =>
          server
            .output()
            .split('\n')
            .some((line) => line.includes('"msg":"claim for parked pops"') && line.includes('"queue":"faults.quiet"')),
        20_000,
      );
      await postgres.stop();
      const stoppedAt = Date.now();
      await new Promise((r) => setTimeout(r, 2000));
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(503);
      postgres = await startEmbeddedPostgres(path.join(dir, 'data'), { fast: true, port: postgres.port });
      restartedAt = Date.now();
      await until(async () => firstAcceptedAfterRestart !== undefined, 20_000);
      await fetch(`${server.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ queue: 'faults.quiet', payload: 'after' }] }),
      });
      const poll = await parked;
      expect(poll.status).toBe(200);
      expect(poll.body.messages[0].data).toBe('after');
      await new Promise((r) => setTimeout(r, 1000));
      producing = false;
      await producer;
      const drained = await until(() => allCommitted(db, QUEUE, ['g']), 60_000);
      await checkInvariants(db, QUEUE, { expected: accepted, leased: [{ group: 'g', log, leaseSeconds: 2 }] });
      report('database restart', {
        messages: accepted,
        'database down for': `${restartedAt - stoppedAt} ms`,
        'push calls refused meanwhile': failedCalls,
        'first push accepted after the restart': `${firstAcceptedAfterRestart! - restartedAt} ms`,
        'drained after': `${drained} ms`,
        'a long poll parked through the outage': 'answered 200 with the message pushed after it',
      });
    } finally {
      producing = false;
      for (const c of consumers) c.kill('SIGKILL');
    }
  }, 120_000);
});
