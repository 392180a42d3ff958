// A parked long poll whose deadline passes while a claim for it runs (issue 30): the claim commits
// what it took for that pop, so the pop answers with it (200), never 204. Before, the deadline
// settled the pop 204 and the running claim's messages went to nobody: acked with autoAck (lost),
// or leased to no client (redelivered only after the lease, with an expiry counted).
// The claim is held in flight by a lock the test takes on queen.cursors, which the claim must
// update; the deadline passes meanwhile; then the lock goes and the claim commits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, sleep, type PopReply } from './support/broker';

const TIMEOUT_MS = 1500;

describe('a long poll whose deadline passes during its claim', () => {
  let app: TestApp;
  beforeAll(async () => {
    // re-checks far apart: only the push's wake-up claims for the parked pop
    app = await startApp({ POP_WAIT_INITIAL_INTERVAL_MS: '10000', POP_WAIT_MAX_INTERVAL_MS: '10000' });
  });
  afterAll(() => app.stop());

  /** Parks a pop, pushes while the claim that push wakes cannot finish, lets the deadline pass, then lets the claim commit. */
  async function claimAcrossTheDeadline(queue: string, params: Record<string, string | number | boolean>) {
    // the queue, its partition and the group's cursor exist before the lock (a first push or pop creates them)
    await app.api.push([{ queue, payload: { first: true } }]);
    expect((await popQueue(app.api, queue, { consumerGroup: 'g', wait: false, autoAck: true })).status).toBe(200);
    const started = Date.now();
    const parked: Promise<PopReply> = popQueue(app.api, queue, {
      consumerGroup: 'g',
      wait: true,
      timeout: TIMEOUT_MS,
      batch: 1,
      ...params,
    });
    while ((await app.api.get('/api/dashboard/process')).body.parkedPolls < 1) await sleep(10);
    const lock = await app.db.pool.connect();
    try {
      await lock.query('begin');
      await lock.query('lock table queen.cursors in share mode');
      expect((await app.api.push([{ queue, payload: { n: 12345678 } }])).status).toBe(201);
      // the woken claim is in flight: it waits for the lock
      for (;;) {
        const [{ waiting }] = await app.db.query<{ waiting: number }>(
          `select count(*)::int as waiting from pg_locks l join pg_class c on c.oid = l.relation
           where c.relname = 'cursors' and not l.granted`,
        );
        if (waiting > 0) break;
        await sleep(10);
      }
      // the pop's deadline passes while its claim waits
      await sleep(Math.max(0, started + TIMEOUT_MS + 300 - Date.now()));
    } finally {
      await lock.query('commit');
      lock.release();
    }
    return parked;
  }

  it('with autoAck: the pop answers 200 with the message its claim acked', async () => {
    const reply = await claimAcrossTheDeadline('deadline.auto', { autoAck: true });
    expect(reply.status).toBe(200);
    expect(reply.body.messages.map((m: { data: unknown }) => m.data)).toEqual([{ n: 12345678 }]);
    // and nothing is left for the group: the message was delivered, to this pop
    expect((await popQueue(app.api, 'deadline.auto', { consumerGroup: 'g', wait: false })).status).toBe(204);
  });

  it('leased: the pop answers 200 holding the lease its claim took', async () => {
    const reply = await claimAcrossTheDeadline('deadline.leased', {});
    expect(reply.status).toBe(200);
    const [m] = reply.body.messages;
    expect(m.data).toEqual({ n: 12345678 });
    const [cursor] = await app.db.query<{ lease_id: string }>(
      `select c.lease_id::text from queen.cursors c join queen.queues q on q.id = c.queue_id
       where q.name = 'deadline.leased' and c.consumer_group = 'g'`,
    );
    expect(cursor.lease_id).toBe(m.leaseId);
    const ack = await app.api.post('/api/v1/ack', {
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      consumerGroup: 'g',
      status: 'completed',
    });
    expect(ack.status).toBe(200);
  });
});
