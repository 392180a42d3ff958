// GET /api/v1/messages (filters, status, paging) and DELETE /api/v1/messages/:partitionId/:transactionId
// (admin, audited; a message inside a live lease counts as acked for that lease).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
});
afterAll(() => app.stop());

const list = (query: string) => app.api.get(`/api/v1/messages?${query}`);
const statuses = (body: any) => Object.fromEntries(body.messages.map((m: any) => [m.transactionId, m.status]));

describe('GET /api/v1/messages', () => {
  it('lists the last hour newest first with queue mode status, in the Queen shape', async () => {
    await pushMany(app.api, 'ml.mode', 'p', 4, 'mode');
    await ackAll(app.api, await popQueue(app.api, 'ml.mode', { batch: 1 })); // mode-0 completed
    const held = await popQueue(app.api, 'ml.mode', { batch: 1 }); // mode-1 processing
    const res = await list('queue=ml.mode');
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: any) => m.transactionId)).toEqual(['mode-3', 'mode-2', 'mode-1', 'mode-0']);
    expect(statuses(res.body)).toEqual({
      'mode-0': 'completed',
      'mode-1': 'processing',
      'mode-2': 'pending',
      'mode-3': 'pending',
    });
    expect(res.body.messages[2]).toEqual({
      id: expect.any(String),
      transactionId: 'mode-1',
      partitionId: held.body.partitionId,
      queuePath: 'ml.mode/p',
      queue: 'ml.mode',
      partition: 'p',
      namespace: 'ml',
      task: 'mode',
      status: 'processing',
      traceId: null,
      producerSub: null,
      createdAt: expect.stringMatching(/Z$/),
      leaseExpiresAt: expect.stringMatching(/Z$/),
    });
    expect(res.body.messages[0].leaseExpiresAt).toBeNull();
    expect(res.body.pagination).toMatchObject({ limit: 200, offset: 0 });
  });

  it('judges status for a named group, or by every group when only groups consume', async () => {
    await pushMany(app.api, 'ml.groups', 'p', 2, 'g');
    await ackAll(app.api, await popQueue(app.api, 'ml.groups', { consumerGroup: 'fast', batch: 2 }));
    await app.api.post('/api/v1/consumer-groups/slow/subscription', { queue: 'ml.groups', subscriptionMode: 'all' });
    expect(statuses((await list('queue=ml.groups&consumerGroup=fast')).body)).toEqual({
      'g-0': 'completed',
      'g-1': 'completed',
    });
    expect(statuses((await list('queue=ml.groups')).body)).toEqual({ 'g-0': 'pending', 'g-1': 'pending' });
    await ackAll(app.api, await popQueue(app.api, 'ml.groups', { consumerGroup: 'slow', batch: 2 }));
    expect(statuses((await list('queue=ml.groups')).body)).toEqual({ 'g-0': 'completed', 'g-1': 'completed' });
  });

  it('filters by partition, namespace, task, status and time, and pages with limit and offset', async () => {
    await pushMany(app.api, 'mf.one', 'a', 3, 'a');
    await pushMany(app.api, 'mf.one', 'b', 2, 'b');
    await pushMany(app.api, 'mf.two', 'a', 1, 'two');
    expect((await list('queue=mf.one&partition=b')).body.messages.map((m: any) => m.transactionId).sort()).toEqual([
      'b-0',
      'b-1',
    ]);
    expect((await list('ns=mf')).body.messages).toHaveLength(6);
    expect((await list('ns=mf&task=two')).body.messages.map((m: any) => m.transactionId)).toEqual(['two-0']);
    expect((await list('ns=mf&status=completed')).body.messages).toEqual([]);
    expect((await list('ns=mf&status=pending')).body.messages).toHaveLength(6);
    const all = (await list('ns=mf')).body.messages.map((m: any) => m.transactionId);
    const page = await list('ns=mf&limit=2&offset=2');
    expect(page.body.messages.map((m: any) => m.transactionId)).toEqual(all.slice(2, 4));
    expect(page.body.pagination).toMatchObject({ limit: 2, offset: 2 });
    expect(
      (
        await list(
          `ns=mf&from=${new Date(Date.now() + 60_000).toISOString()}&to=${new Date(Date.now() + 120_000).toISOString()}`,
        )
      ).body.messages,
    ).toEqual([]);
    expect((await list('ns=mf&from=2000-01-01T00:00:00Z')).body.messages).toHaveLength(6);
    expect((await list('queue=nothing-here')).body.messages).toEqual([]);
  });

  it('refuses bad filters with a 400 naming the field', async () => {
    for (const [query, field] of [
      ['status=lost', 'status'],
      ['limit=1001', 'limit'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=100001', 'offset'],
      ['from=yesterday', 'from'],
      ['to=2026-01-01', 'to'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      [`queue=${'q'.repeat(513)}`, 'queue'],
    ]) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: `));
    }
  });
});

describe('DELETE /api/v1/messages/:partitionId/:transactionId', () => {
  const cursor = (partitionId: string, group: string) =>
    app.db
      .query<any>(
        `select committed_offset::int as committed, acked_offsets::int[] as acked, lease_id, evicted::int as evicted
      from queen.cursors where partition_id = $1 and consumer_group = $2`,
        [partitionId, group],
      )
      .then((r) => r[0]);

  it('inside a live lease it counts as acked for that lease: acking the rest completes and releases it; audited', async () => {
    await pushMany(app.api, 'md.lease', 'p', 3, 'l');
    const held = await popQueue(app.api, 'md.lease', { consumerGroup: 'worker', batch: 2 });
    const pid = held.body.partitionId;
    const res = await app.api.del(`/api/v1/messages/${pid}/l-0?reason=poison%20pill`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, partitionId: pid, transactionId: 'l-0' });
    expect(await cursor(pid, 'worker')).toMatchObject({ committed: 1, lease_id: held.body.leaseId, evicted: 1 });
    expect((await app.api.get(`/api/v1/messages/${pid}/l-0`)).status).toBe(404);
    const ack = await app.api.post('/api/v1/ack', {
      transactionId: 'l-1',
      partitionId: pid,
      consumerGroup: 'worker',
      leaseId: held.body.leaseId,
    });
    expect(ack.body[0]).toMatchObject({ success: true, leaseReleased: true });
    expect(await cursor(pid, 'worker')).toMatchObject({ committed: 2, lease_id: null });
    const next = await popQueue(app.api, 'md.lease', { consumerGroup: 'worker', batch: 10 });
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['l-2']);
    const audit = await app.db.query<any>(
      `select actor, target_type, target, reason, result, details from queen.audit_log where action = 'message.delete'`,
    );
    expect(audit).toEqual([
      {
        actor: expect.any(String),
        target_type: 'message',
        target: `${pid}/l-0`,
        reason: 'poison pill',
        result: 'ok',
        details: {
          queue: 'md.lease',
          partition: 'p',
          partitionId: pid,
          offset: 1,
          groups: [{ consumer_group: 'worker', committed: 1, leased: true, released: false }],
          partitions: [{ queue: 'md.lease', partition: 'p', partitionId: pid, group: 'worker' }],
        },
      },
    ]);
  });

  it('the last unacked message of a lease ends the lease; a group that had not reached it passes it; lag agrees', async () => {
    await pushMany(app.api, 'md.pass', 'p', 3, 's');
    const held = await popQueue(app.api, 'md.pass', { consumerGroup: 'one', batch: 1 });
    const pid = held.body.partitionId;
    await app.api.post('/api/v1/consumer-groups/other/subscription', { queue: 'md.pass', subscriptionMode: 'all' });
    await app.api.del(`/api/v1/messages/${pid}/s-0`);
    expect(await cursor(pid, 'one')).toMatchObject({ committed: 1, lease_id: null });
    await app.api.del(`/api/v1/messages/${pid}/s-1`);
    expect(await cursor(pid, 'other')).toMatchObject({ committed: 2, acked: [], evicted: 2 });
    const rest = await popQueue(app.api, 'md.pass', { consumerGroup: 'other', batch: 10 });
    expect(rest.body.messages.map((m: any) => m.transactionId)).toEqual(['s-2']);
    await ackAll(app.api, rest);
    const groups = (await app.api.get('/api/v1/consumer-groups')).body.filter((g: any) => g.queueName === 'md.pass');
    expect(Object.fromEntries(groups.map((g: any) => [g.name, g.totalLag]))).toEqual({ one: 1, other: 0 });
    const stored = await app.db.query<any>(`select count(*)::int as n from queen.messages where partition_id = $1`, [
      pid,
    ]);
    expect(stored[0].n).toBe(1);
    expect(
      (await app.api.get('/api/v1/resources/queues')).body.queues.find((q: any) => q.name === 'md.pass'),
    ).toBeDefined();
  });

  it('404 for an unknown message or partition, 400 for a bad reason, and nothing written', async () => {
    await pushMany(app.api, 'md.unknown', 'p', 1, 'u');
    const pid = (await app.api.get('/api/v1/resources/queues/md.unknown')).body.partitions[0].id;
    const before = await app.db.query<any>(`select count(*)::int as n from queen.audit_log`);
    expect((await app.api.del(`/api/v1/messages/${pid}/nope`)).status).toBe(404);
    expect((await app.api.del('/api/v1/messages/0190a000-0000-7000-8000-000000000000/u-0')).status).toBe(404);
    expect((await app.api.del('/api/v1/messages/not-a-uuid/u-0')).status).toBe(404);
    const bad = await app.api.del(`/api/v1/messages/${pid}/u-0?reason=${'x'.repeat(501)}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^reason: /);
    expect(await app.db.query<any>(`select count(*)::int as n from queen.audit_log`)).toEqual(before);
    expect((await app.api.get(`/api/v1/messages/${pid}/u-0`)).status).toBe(200);
  });
});
