// Acks, lease extension, transactions and the lease tools: http-api.md and DESIGN.md §4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep, type PopReply } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const ack = (m: any, extra: Record<string, unknown> = {}) =>
  app.api.post('/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, consumerGroup: m.consumerGroup, leaseId: m.leaseId, ...extra });

const cursor = async (partitionId: string, group: string) =>
  (await app.db.query<any>(
    `select committed_offset::int as committed, acked_offsets::int[] as acked, lease_id, failures::int, dead_letters::int
     from queen.cursors where partition_id = $1 and consumer_group = $2`, [partitionId, group]))[0];

describe('ack', () => {
  it('answers per item, in request order, with every field', async () => {
    await pushMany(app.api, 'ack.shape', 'p', 2);
    const r = await popQueue(app.api, 'ack.shape', { consumerGroup: 'g' });
    const res = await ack(r.body.messages[0]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ index: 0, transactionId: 'p-0', success: true, error: null, queueName: 'ack.shape', partitionName: 'p', leaseReleased: false, dlq: false }]);
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
    expect((await ack(r.body.messages[0])).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await ack(r.body.messages[0], { consumerGroup: 'never-popped' })).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await ack({ ...r.body.messages[0], transactionId: 'nope' })).body[0]).toMatchObject({ success: false, error: 'Message not found' });
    expect((await ack({ ...r.body.messages[0], partitionId: 'not-a-uuid' })).body[0]).toMatchObject({ success: false, error: 'Message not found' });
  });

  it('a missing or null consumerGroup means queue mode', async () => {
    await pushMany(app.api, 'ack.qm', 'p', 1);
    const r = await popQueue(app.api, 'ack.qm');
    const res = await app.api.post('/api/v1/ack', { transactionId: 'p-0', partitionId: r.body.partitionId, consumerGroup: null });
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
    expect(detail.body.consumerGroups[0]).toMatchObject({ name: 'g', state: 'leased', deliveries: 2, failures: 1, lastError: 'downstream 503' });
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
      transactionId: 'p-0', queue: 'ack.dlq', partition: 'p', consumerGroup: 'g', errorMessage: 'second', retryCount: 2, data: { seq: 0 }, producerSub: null,
    });
    expect(Object.keys(dlq.body.messages[0]).sort()).toEqual(['consumerGroup', 'createdAt', 'data', 'errorMessage', 'failedAt', 'id', 'offset', 'partition', 'partitionId', 'producerSub', 'queue', 'retryCount', 'transactionId']);
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
        { transactionId: m2.transactionId, partitionId: m2.partitionId, status: 'failed', error: 'bad', leaseId: r.body.leaseId },
        // judged against the lease as it stood when the call began, although the failure above releases it
        { transactionId: m3.transactionId, partitionId: m3.partitionId, status: 'completed', leaseId: r.body.leaseId },
      ],
    });
    expect(res.body.map((x: any) => [x.index, x.success, x.leaseReleased])).toEqual([[0, true, true], [1, true, true], [2, true, true]]);
    expect(await cursor(r.body.partitionId, 'g')).toMatchObject({ committed: 1, acked: [3], lease_id: null, failures: 1 });
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
      "select failures, count(*)::int as n from queen.message_attempts where consumer_group = 'g' and partition_id = $1 group by failures", [r.body.partitionId]);
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
    expect(res.body).toEqual([{ index: 0, leaseId: r.body.leaseId, success: true, error: null, expiresAt: expect.stringMatching(/Z$/) }]);
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
    expect((await app.api.post(`/api/v1/lease/${r.body.leaseId}/extend`, {})).body[0]).toMatchObject({ success: false, error: 'Lease already expired', expiresAt: null });
    const r2 = await popQueue(app.api, 'ext.dead', { batch: 1 });
    await ackAll(app.api, r2);
    expect((await app.api.post(`/api/v1/lease/${r2.body.leaseId}/extend`, {})).body[0]).toMatchObject({ success: false, error: 'Lease not found' });
    expect((await app.api.post('/api/v1/lease/garbage/extend', {})).body[0]).toMatchObject({ success: false, error: 'Lease not found' });
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
        { type: 'push', items: [{ queue: 'tx.out', partition: 'p', payload: { derived: true }, transactionId: 'derived-1' }, { queue: 'tx.out', payload: 2 }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: 'g', leaseId: r.body.leaseId },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.results).toEqual([
      { index: 0, type: 'push', success: true, transactionId: 'derived-1', messageId: expect.any(String), partitionId: expect.any(String), queueName: 'tx.out' },
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
    expect(await app.db.query(`select 1 from queen.messages m join queen.partitions p on p.id = m.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = 'tx.fail.out'`)).toEqual([]);
  });

  it('refuse missing or empty operations, and unknown operation types', async () => {
    expect((await app.api.post('/api/v1/transaction', {})).status).toBe(400);
    expect((await app.api.post('/api/v1/transaction', { operations: [] })).body.error).toMatch(/^operations: /);
    expect((await app.api.post('/api/v1/transaction', { operations: [{ type: 'delete' }] })).status).toBe(400);
  });

  it('wake parked pops like any push once committed', async () => {
    const parked = popQueue(app.api, 'tx.wake', { wait: true, timeout: 10000 });
    await sleep(300);
    await app.api.post('/api/v1/transaction', { operations: [{ type: 'push', items: [{ queue: 'tx.wake', payload: 'hi' }] }] });
    const r = await parked;
    expect(r.status).toBe(200);
  });
});

describe('the lease tools', () => {
  it('list leases with span, acked count, holder, times, extensions and first-offset deliveries, filterable', async () => {
    await pushMany(app.api, 'tools.list', 'p', 5);
    const r = await popQueue(app.api, 'tools.list', { consumerGroup: 'listing', batch: 3 }, { headers: { 'x-queen-consumer': 'worker-7' } });
    await ack(r.body.messages[1]);
    const res = await app.api.get('/api/v1/leases?queue=tools.list&group=listing&state=live');
    expect(res.body.now).toMatch(/Z$/);
    expect(res.body.leases).toEqual([expect.objectContaining({
      leaseId: r.body.leaseId, queue: 'tools.list', partition: 'p', consumerGroup: 'listing', state: 'live',
      span: { from: 1, to: 3, size: 3 }, acked: 1, holder: 'worker-7', extensions: 0, firstOffsetDeliveries: 1,
    })]);
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

  it('force release ends the lease now, is audited, and the old holder\'s later ack is refused (fenced)', async () => {
    await pushMany(app.api, 'tools.release', 'p', 2);
    const r = await popQueue(app.api, 'tools.release', { consumerGroup: 'g' });
    const res = await app.api.post(`/api/v1/leases/${r.body.leaseId}/release`, { reason: 'worker hung' }, { headers: { 'x-queen-actor': 'oncall@example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ released: true, leaseId: r.body.leaseId, partitions: [{ partitionId: r.body.partitionId, consumerGroup: 'g', queue: 'tools.release', partition: 'p', span: { from: 1, to: 2 }, holder: expect.any(String), expired: false }] });
    expect((await ack(r.body.messages[0])).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    const again = await popQueue(app.api, 'tools.release', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1]);
    const [audit] = await app.db.query<any>("select actor, action, target, reason, result from queen.audit_log where action = 'lease.release' and target = $1", [r.body.leaseId]);
    expect(audit).toEqual({ actor: 'oncall@example.com', action: 'lease.release', target: r.body.leaseId, reason: 'worker hung', result: 'released' });
    expect((await app.api.post(`/api/v1/leases/${r.body.leaseId}/release`, { reason: 'again' })).status).toBe(404);
  });
});
