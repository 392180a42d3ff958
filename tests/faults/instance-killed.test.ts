// Fault: one of two app instances SIGKILLed while its consumer holds leases; the other instance
// redelivers once they expire.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app';
import { startServer, stopProcessGroup, type TestServer } from '../support/server';
import { allCommitted, checkInvariants, pushAll, readLog, report, startConsumer, until, type Claim } from './support';

const QUEUE = 'faults.instance';
const LEASE = 2;

describe('faults: an app instance killed while holding leases', () => {
  let app: TestApp;
  let other: TestServer;
  let dir: string;
  beforeAll(async () => {
    app = await startApp();
    other = await startServer(app.db.url);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-instance-'));
  });
  afterAll(async () => {
    await other.stop();
    await app.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the other instance redelivers the batches once their leases expire', async () => {
    const expected = await pushAll(app.server.url, QUEUE, 4, 50);
    const log = path.join(dir, 'consumers.log');
    // a consumer of the first instance takes leases, then the instance dies under it
    // requestedAt before the request: the lease is granted after it and expires LEASE s after that
    const requestedAt = Date.now();
    const held = await (
      await fetch(
        `${app.server.url}/api/v1/pop/queue/${QUEUE}?consumerGroup=g&batch=40&partitions=2&leaseSeconds=${LEASE}`,
      )
    ).json();
    fs.appendFileSync(
      log,
      `${JSON.stringify({
        t: 'claim',
        name: 'doomed',
        requestedAt,
        receivedAt: Date.now(),
        leaseId: held.leaseId,
        messages: held.messages.map((m: any) => ({
          partition: m.partition,
          seq: m.data.seq,
          transactionId: m.transactionId,
          partitionId: m.partitionId,
        })),
      })}\n`,
    );
    await stopProcessGroup(app.server.process, 'SIGKILL');
    const killedAt = Date.now();
    const consumers = [0, 1].map(() => startConsumer(other.url, QUEUE, 'g', log, { leaseSeconds: LEASE }));
    try {
      const heldIds = new Set(held.messages.map((m: any) => m.transactionId));
      const redelivered = await until(
        async () =>
          readLog(log).some(
            (l) =>
              l.t === 'claim' && l.name !== 'doomed' && (l as Claim).messages.some((m) => heldIds.has(m.transactionId)),
          ),
        20_000,
      );
      await until(() => allCommitted(app.db, QUEUE, ['g']), 60_000);
      await checkInvariants(app.db, QUEUE, { expected, leased: [{ group: 'g', log, leaseSeconds: LEASE }] });
      expect(redelivered).toBeGreaterThanOrEqual(LEASE * 1000 - 500);
      report('instance killed', {
        messages: expected,
        'held by the killed instance': held.messages.length,
        'redelivered by the other after': `${Date.now() - killedAt > 0 ? redelivered : 0} ms`,
        'lease time': `${LEASE} s`,
      });
    } finally {
      for (const c of consumers) c.kill('SIGKILL');
    }
  }, 120_000);
});
