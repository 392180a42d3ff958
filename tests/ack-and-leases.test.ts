// Acks, lease extension, transactions and the lease tools: http-api.md and DESIGN.md §4.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, expireLease, partitionIdsOf, pop, popQueue, pushMany, sleep, type PopReply } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const ack = (m: any, extra: Record<string, unknown> = {}) =>
  app.api.post('/api/v1/ack', {
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    consumerGroup: m.consumerGroup,
    leaseId: m.leaseId,
    ...extra,
  });

const cursor = async (partitionId: string, group: string) =>
  (
    await app.db.query<any>(
      `select committed_offset::int as committed, acked_offsets::int[] as acked, lease_id, failures::int, dead_letters::int
     from queen.cursors where partition_id = $1 and consumer_group = $2`,
      [partitionId, group],
    )
  )[0];

describe('ack', () => {
  it('answers per item, in request order, with every field', async () => {
    await pushMany(app.api, 'ack.shape', 'p', 2);
    const r = await popQueue(app.api, 'ack.shape', { consumerGroup: 'g' });
    const res = await ack(r.body.messages[0]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        index: 0,
        transactionId: 'p-0',
        success: true,
        error: null,
        queueName: 'ack.shape',
        partitionName: 'p',
        leaseReleased: false,
        dlq: false,
      },
    ]);
  });

  it('completed: the cursor advances over the contiguous acked prefix; an out-of-order ack is remembered', async () => {
    await pushMany(app.api, 'ack.prefix', 'p', 4);
    const r = await popQueue(app.api, 'ack.prefix', { consumerGroup: 'g' });
    const [m1, m2, m3, m4] = r.body.messages;
    await ack(m3);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 0, acked: [3] });
    await ack(m1);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 1, acked: [3] });
    await ack(m2);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 3, acked: [] });
    const last = await ack(m4);
    expect(last.body[0].leaseReleased).toBe(true); // the whole span is acked
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 4, lease_id: null });
  });

  it('acking an offset at or below the cursor again succeeds (idempotent)', async () => {
    await pushMany(app.api, 'ack.idem', 'p', 1);
    const r = await popQueue(app.api, 'ack.idem', { consumerGroup: 'g' });
    await ack(r.body.messages[0]);
    const again = await ack(r.body.messages[0]);
    expect(again.body[0]).toMatchObject({ success: true, error: null, leaseReleased: false });
  });

  it('is fenced by lease id: an ack carrying another lease id is refused', async () => {
    await pushMany(app.api, 'ack.fence', 'p', 1);
    const r = await popQueue(app.api, 'ack.fence', { consumerGroup: 'g' });
    const wrong = await ack(r.body.messages[0], { leaseId: '01a2291d-98d7-78cc-b1bd-7f3819ba7725' });
    expect(wrong.body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    const garbage = await ack(r.body.messages[0], { leaseId: 'not-a-uuid' });
    expect(garbage.body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    const without = await ack(r.body.messages[0], { leaseId: null });
    expect(without.body[0]).toMatchObject({ success: true });
  });

  it('outside a live lease: Invalid or expired lease; an unknown message: Message not found', async () => {
    await pushMany(app.api, 'ack.nolease', 'p', 1);
    const r = await popQueue(app.api, 'ack.nolease', { consumerGroup: 'g', leaseSeconds: 1 });
    await sleep(1200);
    expect((await ack(r.body.messages[0])).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    expect((await ack(r.body.messages[0], { consumerGroup: 'never-popped' })).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    expect((await ack({ ...r.body.messages[0], transactionId: 'nope' })).body[0]).toMatchObject({
      success: false,
      error: 'Message not found',
    });
    expect((await ack({ ...r.body.messages[0], partitionId: 'not-a-uuid' })).body[0]).toMatchObject({
      success: false,
      error: 'Message not found',
    });
  });

  it('a missing or null consumerGroup means queue mode', async () => {
    await pushMany(app.api, 'ack.qm', 'p', 1);
    const r = await popQueue(app.api, 'ack.qm');
    const res = await app.api.post('/api/v1/ack', {
      transactionId: 'p-0',
      partitionId: r.body.partitionId,
      consumerGroup: null,
    });
    expect(res.body[0]).toMatchObject({ success: true, leaseReleased: true });
  });

  it('failed: counts one failure, releases the lease at once, and the span redelivers after retryDelay', async () => {
    await app.api.post('/api/v1/configure', { queue: 'ack.failed', options: { retryDelay: 800, retryLimit: 5 } });
    await pushMany(app.api, 'ack.failed', 'p', 3);
    const r = await popQueue(app.api, 'ack.failed', { consumerGroup: 'g' });
    await ack(r.body.messages[0]);
    const failed = await ack(r.body.messages[1], { status: 'failed', error: 'downstream 503' });
    expect(failed.body[0]).toMatchObject({ success: true, leaseReleased: true, dlq: false });
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 1, lease_id: null, failures: 1 });
    expect((await popQueue(app.api, 'ack.failed', { consumerGroup: 'g' })).status).toBe(204); // retryDelay
    await sleep(900);
    const again = await popQueue(app.api, 'ack.failed', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.data.seq)).toEqual([1, 2]);
    const detail = await app.api.get(`/api/v1/messages/${r.body.partitionId}/p-1`);
    expect(detail.body.consumerGroups[0]).toMatchObject({
      name: 'g',
      state: 'leased',
      deliveries: 2,
      failures: 1,
      lastError: 'downstream 503',
    });
  });

  it('failures past retryLimit send the message to the dead letters, and the cursor moves past it', async () => {
    await app.api.post('/api/v1/configure', { queue: 'ack.dlq', options: { retryDelay: 0, retryLimit: 1 } });
    await pushMany(app.api, 'ack.dlq', 'p', 2);
    let r = await popQueue(app.api, 'ack.dlq', { consumerGroup: 'g', batch: 1 });
    expect((await ack(r.body.messages[0], { status: 'failed', error: 'first' })).body[0].dlq).toBe(false);
    r = await popQueue(app.api, 'ack.dlq', { consumerGroup: 'g', batch: 1 });
    const second = await ack(r.body.messages[0], { status: 'failed', error: 'second' });
    expect(second.body[0]).toMatchObject({ success: true, dlq: true });
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 1, dead_letters: 1, failures: 2 });
    const next = await popQueue(app.api, 'ack.dlq', { consumerGroup: 'g' });
    expect(next.body.messages.map((m: any) => m.data.seq)).toEqual([1]);
    const dlq = await app.api.get('/api/v1/dlq?queue=ack.dlq');
    expect(dlq.body.pagination).toEqual({ limit: 100, offset: 0, total: 1 });
    expect(dlq.body.messages[0]).toMatchObject({
      transactionId: 'p-0',
      queue: 'ack.dlq',
      partition: 'p',
      consumerGroup: 'g',
      errorMessage: 'second',
      retryCount: 2,
      data: { seq: 0 },
      producerSub: null,
    });
    expect(Object.keys(dlq.body.messages[0]).sort()).toEqual([
      'consumerGroup',
      'createdAt',
      'data',
      'errorMessage',
      'failedAt',
      'id',
      'offset',
      'partition',
      'partitionId',
      'producerSub',
      'queue',
      'retryCount',
      'transactionId',
    ]);
    const detail = await app.api.get(`/api/v1/messages/${r.body.partitionId}/p-0`);
    expect(detail.body.consumerGroups[0]).toMatchObject({ state: 'dead_letter', failures: 2, lastError: 'second' });
  });

  it('a batch ack is one unit: completions advance the cursor, each failed item counts one failure, the lease is released after the call', async () => {
    await app.api.post('/api/v1/configure', { queue: 'ack.unit', options: { retryDelay: 0 } });
    await pushMany(app.api, 'ack.unit', 'p', 4);
    const r = await popQueue(app.api, 'ack.unit', { consumerGroup: 'g' });
    const [m1, m2, m3] = r.body.messages;
    const res = await app.api.post('/api/v1/ack/batch', {
      consumerGroup: 'g',
      acknowledgments: [
        { transactionId: m1.transactionId, partitionId: m1.partitionId, status: 'completed', leaseId: r.body.leaseId },
        {
          transactionId: m2.transactionId,
          partitionId: m2.partitionId,
          status: 'failed',
          error: 'bad',
          leaseId: r.body.leaseId,
        },
        // judged against the lease as it stood when the call began, although the failure above releases it
        { transactionId: m3.transactionId, partitionId: m3.partitionId, status: 'completed', leaseId: r.body.leaseId },
      ],
    });
    expect(res.body.map((x: any) => [x.index, x.success, x.leaseReleased])).toEqual([
      [0, true, true],
      [1, true, true],
      [2, true, true],
    ]);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({
      committed: 1,
      acked: [3],
      lease_id: null,
      failures: 1,
    });
    const again = await popQueue(app.api, 'ack.unit', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.data.seq)).toEqual([1, 3]); // 3 is done and is not sent again
  });

  it('a consumer that fails a whole batch of N counts N failures, one per message, and gets the batch back once', async () => {
    await app.api.post('/api/v1/configure', { queue: 'ack.failall', options: { retryDelay: 0, retryLimit: 3 } });
    await pushMany(app.api, 'ack.failall', 'p', 100);
    const r = await popQueue(app.api, 'ack.failall', { consumerGroup: 'g', batch: 100 });
    const res = await ackAll(app.api, r, 'failed', 'all bad');
    expect(res.every((x) => x.success && !x.dlq)).toBe(true);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 0, failures: 100 });
    const attempts = await app.db.query<{ failures: number; n: number }>(
      "select failures, count(*)::int as n from queen.message_attempts where consumer_group = 'g' and partition_id = $1 group by failures",
      [r.body.partitionId],
    );
    expect(attempts).toEqual([{ failures: 1, n: 100 }]);
    const back: PopReply = await popQueue(app.api, 'ack.failall', { consumerGroup: 'g', batch: 100 });
    expect(back.body.messages).toHaveLength(100);
  });
});

describe('lease extension', () => {
  it('extends every live lease row with that id to max(current expiry, now + seconds)', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'ext.multi', p, 1);
    const r = await popQueue(app.api, 'ext.multi', { consumerGroup: 'g', partitions: 0, leaseSeconds: 10 });
    const res = await app.api.post(`/api/v1/lease/${r.body.leaseId}/extend`, { seconds: 120 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { index: 0, leaseId: r.body.leaseId, success: true, error: null, expiresAt: expect.stringMatching(/Z$/) },
    ]);
    const leases = (await app.api.get('/api/v1/leases?queue=ext.multi')).body.leases;
    expect(leases).toHaveLength(2);
    for (const l of leases) {
      expect(l.expiresInSeconds).toBeGreaterThan(115);
      expect(l.extensions).toBe(1);
    }
    // never shortens
    await app.api.post(`/api/v1/lease/${r.body.leaseId}/extend`, { seconds: 5 });
    expect((await app.api.get('/api/v1/leases?queue=ext.multi')).body.leases[0].expiresInSeconds).toBeGreaterThan(110);
  });

  it('{} or no body means 60 seconds', async () => {
    await pushMany(app.api, 'ext.default', 'p', 1);
    const r = await popQueue(app.api, 'ext.default', { leaseSeconds: 5 });
    await app.api.request('POST', `/api/v1/lease/${r.body.leaseId}/extend`, '');
    const [l] = (await app.api.get('/api/v1/leases?queue=ext.default')).body.leases;
    expect(l.expiresInSeconds).toBeGreaterThan(55);
  });

  it('an expired or released lease is not revived', async () => {
    await pushMany(app.api, 'ext.dead', 'p', 2);
    const r = await popQueue(app.api, 'ext.dead', { leaseSeconds: 1, batch: 1 });
    await sleep(1200);
    expect((await app.api.post(`/api/v1/lease/${r.body.leaseId}/extend`, {})).body[0]).toMatchObject({
      success: false,
      error: 'Lease already expired',
      expiresAt: null,
    });
    const r2 = await popQueue(app.api, 'ext.dead', { batch: 1 });
    await ackAll(app.api, r2);
    expect((await app.api.post(`/api/v1/lease/${r2.body.leaseId}/extend`, {})).body[0]).toMatchObject({
      success: false,
      error: 'Lease not found',
    });
    expect((await app.api.post('/api/v1/lease/garbage/extend', {})).body[0]).toMatchObject({
      success: false,
      error: 'Lease not found',
    });
  });

  it('refuses seconds that are not a positive integer', async () => {
    const res = await app.api.post('/api/v1/lease/01a2291d-98d7-78cc-b1bd-7f3819ba7725/extend', { seconds: -5 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^seconds: /);
  });
});

describe('transactions', () => {
  it('commit pushes and acks together, in order', async () => {
    await pushMany(app.api, 'tx.in', 'p', 1);
    const r = await popQueue(app.api, 'tx.in', { consumerGroup: 'g' });
    const m = r.body.messages[0];
    const res = await app.api.post('/api/v1/transaction', {
      operations: [
        {
          type: 'push',
          items: [
            { queue: 'tx.out', partition: 'p', payload: { derived: true }, transactionId: 'derived-1' },
            { queue: 'tx.out', payload: 2 },
          ],
        },
        {
          type: 'ack',
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          status: 'completed',
          consumerGroup: 'g',
          leaseId: r.body.leaseId,
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.results).toEqual([
      {
        index: 0,
        type: 'push',
        success: true,
        transactionId: 'derived-1',
        messageId: expect.any(String),
        partitionId: expect.any(String),
        queueName: 'tx.out',
      },
      expect.objectContaining({ index: 1, type: 'push', success: true, queueName: 'tx.out' }),
      { index: 2, type: 'ack', success: true, transactionId: m.transactionId, error: null, dlq: false },
    ]);
    expect((await popQueue(app.api, 'tx.out', { batch: 10, partitions: 0 })).body.messages).toHaveLength(2);
    expect(await cursor(m.partitionId, 'g')).toMatchObject({ committed: 1 });
  });

  it('roll back everything when an operation fails', async () => {
    await pushMany(app.api, 'tx.fail', 'p', 1);
    const res = await app.api.post('/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'tx.fail.out', payload: 1 }] },
        { type: 'ack', transactionId: 'p-0', partitionId: '01a2291d-98d7-78cc-b1bd-7f3819ba7725', consumerGroup: 'g' },
      ],
    });
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/Message not found/);
    expect(res.body.results[1]).toMatchObject({ type: 'ack', success: false, error: 'Message not found' });
    expect(
      await app.db.query(`select 1 from queen.messages m join queen.partitions p on p.id = m.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = 'tx.fail.out'`),
    ).toEqual([]);
  });

  it('refuse missing or empty operations, and unknown operation types', async () => {
    expect((await app.api.post('/api/v1/transaction', {})).status).toBe(400);
    expect((await app.api.post('/api/v1/transaction', { operations: [] })).body.error).toMatch(/^operations: /);
    expect((await app.api.post('/api/v1/transaction', { operations: [{ type: 'delete' }] })).status).toBe(400);
  });

  it('wake parked pops like any push once committed', async () => {
    const parked = popQueue(app.api, 'tx.wake', { wait: true, timeout: 10000 });
    await sleep(300);
    await app.api.post('/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'tx.wake', payload: 'hi' }] }],
    });
    const r = await parked;
    expect(r.status).toBe(200);
  });
});

describe('the lease tools', () => {
  it('list leases with span, acked count, holder, times, extensions and first-offset deliveries, filterable', async () => {
    await pushMany(app.api, 'tools.list', 'p', 5);
    const r = await popQueue(
      app.api,
      'tools.list',
      { consumerGroup: 'listing', batch: 3 },
      { headers: { 'x-queen-consumer': 'worker-7' } },
    );
    await ack(r.body.messages[1]);
    const res = await app.api.get('/api/v1/leases?queue=tools.list&group=listing&state=live');
    expect(res.body.now).toMatch(/Z$/);
    expect(res.body.leases).toEqual([
      expect.objectContaining({
        leaseId: r.body.leaseId,
        queue: 'tools.list',
        partition: 'p',
        consumerGroup: 'listing',
        state: 'live',
        span: { from: 1, to: 3, size: 3 },
        acked: 1,
        holder: 'worker-7',
        extensions: 0,
        firstOffsetDeliveries: 1,
      }),
    ]);
    expect((await app.api.get('/api/v1/leases?queue=tools.list&holder=worker-7')).body.leases).toHaveLength(1);
    expect((await app.api.get('/api/v1/leases?queue=tools.list&state=expired')).body.leases).toHaveLength(0);
    expect((await app.api.get('/api/v1/leases?state=sideways')).status).toBe(400);
  });

  it('stuck: a live lease whose first offset was delivered more than 3 times', async () => {
    await pushMany(app.api, 'tools.stuck', 'p', 1);
    for (let i = 0; i < 4; i++) {
      await popQueue(app.api, 'tools.stuck', { leaseSeconds: 1 });
      await sleep(1050);
    }
    const r = await popQueue(app.api, 'tools.stuck', { leaseSeconds: 30 });
    const stuck = (await app.api.get('/api/v1/leases?queue=tools.stuck&state=stuck')).body.leases;
    expect(stuck.map((l: any) => [l.leaseId, l.firstOffsetDeliveries])).toEqual([[r.body.leaseId, 5]]);
  });

  it("force release ends the lease now, is audited, and the old holder's later ack is refused (fenced)", async () => {
    await pushMany(app.api, 'tools.release', 'p', 2);
    const r = await popQueue(app.api, 'tools.release', { consumerGroup: 'g' });
    const res = await app.api.post(
      `/api/v1/leases/${r.body.leaseId}/release`,
      { reason: 'worker hung' },
      { headers: { 'x-queen-actor': 'oncall@example.com' } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      released: true,
      leaseId: r.body.leaseId,
      partitions: [
        {
          partitionId: r.body.partitionId,
          consumerGroup: 'g',
          queue: 'tools.release',
          partition: 'p',
          span: { from: 1, to: 2 },
          holder: expect.any(String),
          expired: false,
        },
      ],
    });
    expect((await ack(r.body.messages[0])).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    const again = await popQueue(app.api, 'tools.release', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1]);
    const [audit] = await app.db.query<any>(
      "select actor, action, target, reason, result from queen.audit_log where action = 'lease.release' and target = $1",
      [r.body.leaseId],
    );
    expect(audit).toEqual({
      actor: 'oncall@example.com',
      action: 'lease.release',
      target: r.body.leaseId,
      reason: 'worker hung',
      result: 'released',
    });
    expect((await app.api.post(`/api/v1/leases/${r.body.leaseId}/release`, { reason: 'again' })).status).toBe(404);
  });
});

describe('a failed ack and a transaction of acks', () => {
  const configure = (queue: string, options: Record<string, unknown>) =>
    app.api.post('/api/v1/configure', { queue, options });
  const ack = (reply: any, i: number, status: 'completed' | 'failed', group: string) =>
    app.api.post('/api/v1/ack', {
      transactionId: reply.body.messages[i].transactionId,
      partitionId: reply.body.messages[i].partitionId,
      leaseId: reply.body.leaseId,
      status,
      consumerGroup: group,
      error: status === 'failed' ? 'boom' : null,
    });

  it('a transaction that pushed to a partition and acks on it neither deadlocks with nor delays a failed ack and a redelivering pop there', async () => {
    await configure('d2.q', { retryDelay: 0 });
    await pushMany(app.api, 'd2.q', 'p', 3, 'd2');
    const g = await popQueue(app.api, 'd2.q', { consumerGroup: 'g', batch: 1 });
    const h = await popQueue(app.api, 'd2.q', { consumerGroup: 'h', batch: 1 });
    const m = g.body.messages[0];
    const a = new pg.Client({ connectionString: app.db.url });
    const b = new pg.Client({ connectionString: app.db.url });
    await a.connect();
    await b.connect();
    try {
      await b.query("set lock_timeout = '2s'"); // a wait fails the test
      await a.query('begin');
      await a.query(`select * from queen.push(jsonb_build_array(jsonb_build_object(
        'queue', 'd2.q', 'partition', 'p', 'payload', 1, 'transactionId', 'in-tx', 'messageId', queen.uuidv7())))`);
      const failed = await b.query(`select * from queen.ack($1::jsonb, null)`, [
        JSON.stringify([
          {
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            status: 'failed',
            error: 'boom',
            leaseId: g.body.leaseId,
            consumerGroup: 'g',
          },
        ]),
      ]);
      expect(failed.rows[0].success).toBe(true);
      const redelivered = await b.query(
        `select * from queen.pop('d2.q', null, '', '', 'g', 1, 1, false, 0, queen.uuidv7(), 'all', null, 'b', false)`,
      );
      expect(redelivered.rows.map((r) => r.transaction_id)).toEqual([m.transactionId]);
      const acked = await a.query(`select * from queen.ack($1::jsonb, null)`, [
        JSON.stringify([
          {
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            status: 'completed',
            leaseId: h.body.leaseId,
            consumerGroup: 'h',
          },
        ]),
      ]);
      expect(acked.rows[0].success).toBe(true);
      await a.query('commit');
    } finally {
      await a.end();
      await b.end();
    }
    expect(await app.db.query(`select 1 from queen.messages where transaction_id = 'in-tx'`)).toHaveLength(1);
  });

  it("a transaction's acks on one lease are judged as one unit, whatever their order", async () => {
    await configure('d7.q', { retryDelay: 0 });
    await pushMany(app.api, 'd7.q', 'p', 2, 'd7');
    for (const [group, order] of [
      ['first-failed', ['failed', 'completed']],
      ['first-completed', ['completed', 'failed']],
    ] as const) {
      const r = await popQueue(app.api, 'd7.q', { consumerGroup: group, batch: 2 });
      const statusOf = (tx: string) => (tx === 'd7-0' ? order[0] : order[1]);
      const res = await app.api.post('/api/v1/transaction', {
        operations: r.body.messages.map((m: any) => ({
          type: 'ack',
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          consumerGroup: group,
          status: statusOf(m.transactionId),
        })),
      });
      expect(res.body, group).toMatchObject({ success: true });
    }
    const cursors =
      await app.db.query(`select consumer_group, committed_offset::int as committed, acked_offsets::int[] as acked, failures::int, lease_id
      from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
      where q.name = 'd7.q' and p.name = 'p' order by consumer_group`);
    expect(cursors).toEqual([
      { consumer_group: 'first-completed', committed: 1, acked: [], failures: 1, lease_id: null },
      { consumer_group: 'first-failed', committed: 0, acked: [2], failures: 1, lease_id: null },
    ]);
  });

  it('a failure that dead-letters holds nothing back, and force-releasing an expired lease counts it as an expiry', async () => {
    await configure('d9.q', { retryLimit: 0, retryDelay: 60_000 });
    await pushMany(app.api, 'd9.q', 'p', 2, 'd9');
    const first = await popQueue(app.api, 'd9.q', { consumerGroup: 'g', batch: 1 });
    expect((await ack(first, 0, 'failed', 'g')).body[0].dlq).toBe(true);
    const next = await popQueue(app.api, 'd9.q', { consumerGroup: 'g', batch: 1 }); // not after a minute's retry delay
    expect(next.body.messages[0].transactionId).toBe('d9-1');

    const held = await popQueue(app.api, 'd9.q', { consumerGroup: 'slow', batch: 1, leaseSeconds: 1 });
    await sleep(1200);
    expect((await app.api.post(`/api/v1/leases/${held.body.leaseId}/release`, { reason: 'gone' })).status).toBe(200);
    const [c] = await app.db.query<{
      n: number;
    }>(`select sum(c.lease_expiries)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
      where q.name = 'd9.q' and c.consumer_group = 'slow'`);
    expect(c.n).toBe(1);
    const [stats] = await app.db.query<{
      n: number;
    }>(`select sum(s.lease_expiries)::int as n from queen.group_stats s join queen.queues q on q.id = s.queue_id
      where q.name = 'd9.q' and s.consumer_group = 'slow'`);
    expect(stats.n).toBe(1); // the counters agree with the cursors
  });
});

describe('releases, fencing, stuck and held-long leases', () => {
  const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
  const ack = (m: any, leaseId: string | null) =>
    app.api.post('/api/v1/ack', {
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      consumerGroup: m.consumerGroup,
      leaseId,
    });
  const partitionIds = (queue: string) => partitionIdsOf(app.api, queue);
  const auditOf = async (action: string) =>
    (
      await app.db.query<any>(
        'select target, details from queen.audit_log where action = $1 order by id desc limit 1',
        [action],
      )
    )[0];
  const admin = { headers: { 'x-queen-actor': 'oncall' } };
  const expire = (leaseId: string) => expireLease(app.db, leaseId);

  it('lists every partition it holds before, releases all of them, answers and audits each span', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'f8.multi', p, 2);
    const ids = await partitionIds('f8.multi');
    const r = await popQueue(app.api, 'f8.multi', { consumerGroup: 'g', partitions: 3 }, as('worker-7'));
    expect(r.body.partitionsClaimed).toBe(3);
    const leaseId = r.body.leaseId;

    const before = await app.api.get(`/api/v1/leases?lease=${leaseId}`);
    expect(before.body.total).toBe(3);
    expect(before.body.leases.map((l: any) => [l.partition, l.span.from, l.span.to]).sort()).toEqual([
      ['a', 1, 2],
      ['b', 1, 2],
      ['c', 1, 2],
    ]);
    expect((await app.api.get('/api/v1/leases?lease=not-a-lease')).status).toBe(400);

    const res = await app.api.post(
      `/api/v1/leases/${leaseId}/release`,
      { reason: 'worker hung' },
      { headers: { 'x-queen-actor': 'oncall' } },
    );
    expect(res.status).toBe(200);
    expect(res.body.partitions).toEqual(
      ['a', 'b', 'c'].map((p) => ({
        partitionId: ids[p],
        consumerGroup: 'g',
        queue: 'f8.multi',
        partition: p,
        span: { from: 1, to: 2 },
        holder: 'worker-7',
        expired: false,
      })),
    );
    const [{ n }] = await app.db.query<{ n: number }>(
      'select count(*)::int as n from queen.cursors where lease_id = $1',
      [leaseId],
    );
    expect(n).toBe(0);
    expect((await app.api.get(`/api/v1/leases?lease=${leaseId}`)).body.total).toBe(0);

    const audit = await auditOf('lease.release');
    expect(audit.target).toBe(leaseId);
    expect(audit.details).toMatchObject({ leaseId, queues: ['f8.multi'], group: 'g', holder: 'worker-7' });
    expect(audit.details.partitions).toEqual(
      ['a', 'b', 'c'].map((p) => ({
        queue: 'f8.multi',
        partition: p,
        partitionId: ids[p],
        group: 'g',
        from: 1,
        to: 2,
        holder: 'worker-7',
        expired: false,
      })),
    );
    // the audit is found from any of the partitions it freed, not only by the lease id
    for (const p of ['a', 'b', 'c']) {
      const found = await app.api.get(`/api/v1/audit?queue=f8.multi&group=g&partitionId=${ids[p]}`);
      expect(found.body.entries.map((e: any) => e.target)).toContain(leaseId);
    }
    expect((await app.api.get(`/api/v1/audit?queue=f8.multi&group=other&partitionId=${ids.a}`)).body.entries).toEqual(
      [],
    );
    expect((await app.api.get('/api/v1/audit?partitionId=nope')).status).toBe(400);
  });

  it('refuses acks with the released id; judges acks without a lease id against the lease live then', async () => {
    await pushMany(app.api, 'f8.fence', 'p', 3);
    const a = await popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('A'));
    const [m1, m2, m3] = a.body.messages;
    await app.api.post(`/api/v1/leases/${a.body.leaseId}/release`, { reason: 'A hung' });

    // released, not re-claimed: no lease holds the offsets, so both kinds of ack are refused
    expect((await ack(m1, null)).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await ack(m1, a.body.leaseId)).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });

    // B and C race for the span: exactly one of them re-claims it
    const [b, c] = await Promise.all([
      popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('B')),
      popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('C')),
    ]);
    const winner = b.status === 200 ? b : c;
    expect([b.status, c.status].sort()).toEqual([200, 204]);
    expect(winner.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0', 'p-1', 'p-2']);

    // A's ack with its old lease id is refused while the offset is not done; the winner's counts;
    // once done, A's repeat succeeds and changes nothing (every repeated ack does)
    expect((await ack(m2, a.body.leaseId)).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    expect((await ack(winner.body.messages[1], winner.body.leaseId)).body[0]).toMatchObject({ success: true });
    const acked = async () =>
      (
        await app.db.query<{ acked: string[] }>(
          "select acked_offsets::text[] as acked from queen.cursors where partition_id = $1 and consumer_group = 'g'",
          [m2.partitionId],
        )
      )[0].acked;
    expect(await acked()).toEqual(['2']);
    expect((await ack(m2, a.body.leaseId)).body[0]).toMatchObject({ success: true });
    expect(await acked()).toEqual(['2']);

    // an ack without a lease id cannot be told apart from the winner's: it is accepted inside the live lease
    const anonymous = await ack(m1, null);
    expect(anonymous.body[0]).toMatchObject({ success: true, error: null });
    const [cursor] = await app.db.query<any>(
      "select committed_offset::int as committed, lease_id from queen.cursors where partition_id = $1 and consumer_group = 'g'",
      [m1.partitionId],
    );
    expect(cursor).toEqual({ committed: 2, lease_id: winner.body.leaseId });
    expect((await ack(m3, winner.body.leaseId)).body[0]).toMatchObject({ success: true, leaseReleased: true });
  });

  it('include expired, unreclaimed leases; the overview counts what the leases page lists, as the database does', async () => {
    for (const p of ['expired', 'held', 'healthy']) await pushMany(app.api, 'f8.stuck', p, 1);
    await pop(app.api, '/queue/f8.stuck/partition/expired', { consumerGroup: 'g', leaseSeconds: 1 });
    const held = await pop(app.api, '/queue/f8.stuck/partition/held', { consumerGroup: 'g', leaseSeconds: 1 });
    await app.api.post(`/api/v1/lease/${held.body.leaseId}/extend`, { seconds: 30 });
    await pop(app.api, '/queue/f8.stuck/partition/healthy', { consumerGroup: 'g', leaseSeconds: 60 });
    await sleep(2200);

    const stuck = (await app.api.get('/api/v1/leases?queue=f8.stuck&state=stuck')).body;
    // an extended lease is held long, not stuck (issue 20): stuck is judged by its current expiry
    expect(stuck.leases.map((l: any) => [l.partition, l.state]).sort()).toEqual([['expired', 'expired']]);
    expect(
      (await app.api.get('/api/v1/leases?queue=f8.stuck&state=held-long')).body.leases.map((l: any) => l.partition),
    ).toEqual(['held']);
    const expired = stuck.leases.find((l: any) => l.state === 'expired');
    expect(expired.heldSeconds).toBeLessThan(1.5); // stopped at the expiry, not still counting
    const [{ n }] = await app.db.query<{ n: number }>(`
      select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
      left join queen.message_attempts a on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = c.committed_offset + 1
      where q.name = 'f8.stuck' and c.lease_id is not null
        and (c.lease_expires_at <= now() or coalesce(a.deliveries, 1) > 3)`);
    expect(n).toBe(1);
    expect(stuck.total).toBe(n);
    const row = (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'f8.stuck');
    expect(row.stuckLeases).toBe(n);
    expect(row.problems.map((p: any) => p.text)).toContain(
      '1 stuck lease (past their expiry, or first message delivered over 3 times)',
    );
  });

  it('an extended lease is held long but not stuck; one past its current expiry is', async () => {
    await pushMany(app.api, 'w20.stuck', 'a', 1);
    await pushMany(app.api, 'w20.stuck', 'b', 1);
    const a = await app.api.get('/api/v1/pop/queue/w20.stuck/partition/a?consumerGroup=g&leaseSeconds=10');
    const b = await app.api.get('/api/v1/pop/queue/w20.stuck/partition/b?consumerGroup=g&leaseSeconds=10');
    // held an hour by extending
    await app.db.query("update queen.cursors set lease_acquired_at = now() - interval '1 hour' where lease_id = $1", [
      a.body.leaseId,
    ]);
    expect((await app.api.post(`/api/v1/lease/${a.body.leaseId}/extend`, { seconds: 120 })).body[0].success).toBe(true);
    await expire(b.body.leaseId);
    const stuck = await app.api.get('/api/v1/leases?queue=w20.stuck&state=stuck');
    expect(stuck.body.leases.map((l: any) => l.partition)).toEqual(['b']);
    const long = await app.api.get('/api/v1/leases?queue=w20.stuck&state=held-long');
    expect(long.body.leases.map((l: any) => l.partition)).toEqual(['a']);
    const overview = await app.api.get('/api/dashboard/overview');
    const q = overview.body.queues.find((x: any) => x.name === 'w20.stuck');
    expect(q.stuckLeases).toBe(1);
  });

  it('releases every lease named with one reason, one audit entry for them all, and answers the ones that had ended', async () => {
    for (let i = 0; i < 10; i++) await pushMany(app.api, 'w20.bulk', `p${i}`, 2);
    const leases: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await app.api.get(
        `/api/v1/pop/queue/w20.bulk/partition/p${i}?consumerGroup=g&leaseSeconds=300`,
        as('dead-holder'),
      );
      leases.push(r.body.leaseId);
    }
    const listed = await app.api.get('/api/v1/leases?holderIs=dead-holder');
    expect(listed.body.total).toBe(10);
    // one ended meanwhile
    const gone = await app.api.post(`/api/v1/leases/${leases[9]}/release`, { reason: 'by hand' });
    expect(gone.status).toBe(200);
    const res = await app.api.post('/api/v1/leases/release', { leaseIds: leases, reason: 'dead-holder died' }, admin);
    expect(res.status).toBe(200);
    expect(res.body.released).toBe(9);
    expect(res.body.results[9]).toMatchObject({ leaseId: leases[9], released: false, error: 'Lease not found' });
    expect(res.body.results[0].partitions[0]).toMatchObject({
      queue: 'w20.bulk',
      partition: 'p0',
      holder: 'dead-holder',
      span: { from: 1, to: 2 },
    });
    expect((await app.api.get('/api/v1/leases?holderIs=dead-holder')).body.total).toBe(0);
    // one operator action, one audit entry, its leases and partitions inside it (issue 34)
    const audits = await app.db.query<any>(
      "select target, details from queen.audit_log where action = 'lease.release' and reason = 'dead-holder died' order by id",
    );
    expect(audits).toHaveLength(1);
    expect(audits[0].target).toBe('9 leases');
    expect([...audits[0].details.leaseIds].sort()).toEqual(leases.slice(0, 9).sort());
    expect(audits[0].details).toMatchObject({ holder: 'dead-holder', queues: ['w20.bulk'], partitionCount: 9 });
    expect(audits[0].details.partitions).toHaveLength(9);
    expect((await app.api.post('/api/v1/leases/release', { leaseIds: leases })).status).toBe(400); // no reason
    expect((await app.api.post('/api/v1/leases/release', { leaseIds: [], reason: 'x' })).status).toBe(400);
  });

  it('the leases listing says how many match even on a page past the end', async () => {
    await pushMany(app.api, 'd10.q', 'p', 1, 'd10');
    await popQueue(app.api, 'd10.q', { consumerGroup: 'g' });
    const res = await app.api.get('/api/v1/leases?queue=d10.q&page=9&pageSize=10');
    expect(res.body).toMatchObject({ total: 1, leases: [] });
  });
});
