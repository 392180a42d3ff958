// The routes around the pop: consumer groups, subscription, seek, deletes, pause, the message route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const audit = (action: string) => app.db.query<any>('select actor, target, reason, result, details from queen.audit_log where action = $1 order by id', [action]);

describe('consumer groups', () => {
  it('list one entry per (group, queue) with partitions, total lag, oldest unconsumed age and subscription', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'cg.list', p, 3);
    const r = await popQueue(app.api, 'cg.list', { consumerGroup: 'lister', partitions: 0, batch: 2 });
    await ackAll(app.api, r);
    await popQueue(app.api, 'cg.list', { consumerGroup: 'newbie', subscriptionMode: 'new' });
    const res = await app.api.get('/api/v1/consumer-groups');
    const lister = res.body.find((g: any) => g.name === 'lister' && g.queueName === 'cg.list');
    // a drained to 2 of 3, b never popped: both partitions count, b from the group's seed (0)
    expect(lister).toMatchObject({ partitions: 2, totalLag: 4, subscription: null });
    expect(lister.oldestUnconsumedAgeSeconds).toBeGreaterThanOrEqual(0);
    const newbie = res.body.find((g: any) => g.name === 'newbie');
    expect(newbie).toMatchObject({ queueName: 'cg.list', totalLag: 0, subscription: { mode: 'new', startAt: expect.stringMatching(/Z$/) } });
  });

  it('detail per queue, per partition: committed offset, head, lag, lease and paused; 404 for an unknown group', async () => {
    await pushMany(app.api, 'cg.detail', 'p', 4);
    const r = await popQueue(app.api, 'cg.detail', { consumerGroup: 'detailed', batch: 2 });
    const res = await app.api.get('/api/v1/consumer-groups/detailed');
    expect(res.body).toEqual({
      consumerGroup: 'detailed',
      queues: [{ queueName: 'cg.detail', totalLag: 4, partitions: [{
        partitionId: r.body.partitionId, partition: 'p', committedOffset: 0, headOffset: 4, lag: 4, paused: false,
        lease: { leaseId: r.body.leaseId, expiresAt: expect.stringMatching(/Z$/), holder: expect.any(String), live: true },
      }] }],
    });
    expect((await app.api.get('/api/v1/consumer-groups/ghost')).status).toBe(404);
  });

  it('subscription: creates or moves the durable record; older clients move every record with subscriptionTimestamp', async () => {
    await pushMany(app.api, 'cg.sub', 'p', 2);
    const created = await app.api.post('/api/v1/consumer-groups/subscriber/subscription', { queue: 'cg.sub', subscriptionMode: 'new' });
    expect(created.body).toMatchObject({ success: true, consumerGroup: 'subscriber', queueName: 'cg.sub', mode: 'new' });
    expect((await popQueue(app.api, 'cg.sub', { consumerGroup: 'subscriber' })).status).toBe(204);

    await pushMany(app.api, 'cg.sub2', 'p', 2);
    await app.api.post('/api/v1/consumer-groups/mover/subscription', { queue: 'cg.sub2', subscriptionMode: 'new' });
    const moved = await app.api.post('/api/v1/consumer-groups/mover/subscription', { subscriptionTimestamp: '2000-01-01T00:00:00Z' });
    expect(moved.body).toMatchObject({ success: true, subscriptionsUpdated: 1 });
    expect((await popQueue(app.api, 'cg.sub2', { consumerGroup: 'mover' })).body.messages).toHaveLength(2);
    expect((await app.api.post('/api/v1/consumer-groups/x/subscription', { queue: 'q', subscriptionFrom: 'soon' })).status).toBe(400);
  });

  it('seek to the end, or to a timestamp, moving the cursors and ending any live lease (audited)', async () => {
    await pushMany(app.api, 'cg.seek', 'p', 2);
    await sleep(50);
    const middle = new Date().toISOString();
    await sleep(50);
    await pushMany(app.api, 'cg.seek', 'p', 2, 'p', 2);
    const held = await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' });
    const toEnd = await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', { toEnd: true, reason: 'skip the backlog' });
    expect(toEnd.body).toEqual({ success: true, consumerGroup: 'seeker', queueName: 'cg.seek', partitionsUpdated: 1 });
    expect((await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' })).status).toBe(204);
    const late = await app.api.post('/api/v1/ack', { transactionId: 'p-0', partitionId: held.body.partitionId, consumerGroup: 'seeker', leaseId: held.body.leaseId });
    expect(late.body[0].success).toBe(true); // at or below the cursor now: done, idempotently
    await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', { timestamp: middle });
    const replay = await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' });
    expect(replay.body.messages.map((m: any) => m.data.seq)).toEqual([2, 3]);
    expect((await audit('cursor.seek')).map((a: any) => [a.target, a.reason])).toEqual([['seeker@cg.seek', 'skip the backlog'], ['seeker@cg.seek', null]]);
    expect((await app.api.post('/api/v1/consumer-groups/seeker/queues/nope/seek', { toEnd: true })).status).toBe(404);
    expect((await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', { toEnd: false })).status).toBe(400);
  });

  it('delete a group on one queue or everywhere, with or without its subscription records', async () => {
    await pushMany(app.api, 'cg.del.a', 'p', 1);
    await pushMany(app.api, 'cg.del.b', 'p', 1);
    for (const q of ['cg.del.a', 'cg.del.b']) await popQueue(app.api, q, { consumerGroup: 'doomed', subscriptionFrom: '2000-01-01T00:00:00Z' });
    const one = await app.api.del('/api/v1/consumer-groups/doomed/queues/cg.del.a?deleteMetadata=false');
    expect(one.body).toEqual({ success: true, consumerGroup: 'doomed', deletedPartitions: 1, metadataDeleted: false });
    expect(await app.db.query("select 1 from queen.subscriptions where consumer_group = 'doomed'")).toHaveLength(2);
    const all = await app.api.del('/api/v1/consumer-groups/doomed?reason=retired');
    expect(all.body).toEqual({ success: true, consumerGroup: 'doomed', deletedPartitions: 1, metadataDeleted: true });
    expect(await app.db.query("select 1 from queen.subscriptions where consumer_group = 'doomed'")).toHaveLength(0);
    expect(await app.db.query("select 1 from queen.cursors where consumer_group = 'doomed'")).toHaveLength(0);
    expect((await audit('consumer_group.delete')).map((a: any) => [a.target, a.reason])).toEqual([['doomed@cg.del.a', null], ['doomed', 'retired']]);
    expect((await app.api.del('/api/v1/consumer-groups/doomed?deleteMetadata=maybe')).status).toBe(400);
  });
});

describe('pause', () => {
  it('a paused (partition, group) is skipped by pops; resuming restores it; both are audited', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'pause.q', p, 1);
    const partitions = (await app.api.get('/api/v1/resources/queues/pause.q')).body.partitions;
    const a = partitions.find((p: any) => p.name === 'a').id;
    const paused = await app.api.post(`/api/v1/cursors/${a}/g/pause`, { paused: true, reason: 'poison message' }, { headers: { 'x-queen-actor': 'alice' } });
    expect(paused.body).toEqual({ partitionId: a, consumerGroup: 'g', paused: true, reason: 'poison message', until: null });
    const r = await popQueue(app.api, 'pause.q', { consumerGroup: 'g', partitions: 0 });
    expect(r.body.messages.map((m: any) => m.partition)).toEqual(['b']);
    expect((await pop(app.api, '/queue/pause.q/partition/a', { consumerGroup: 'g' })).status).toBe(204);
    expect((await popQueue(app.api, 'pause.q', { consumerGroup: 'other', partitions: 0 })).body.messages).toHaveLength(2); // other groups unaffected
    await app.api.post(`/api/v1/cursors/${a}/g/pause`, { paused: false, reason: 'fixed' }, { headers: { 'x-queen-actor': 'alice' } });
    expect((await pop(app.api, '/queue/pause.q/partition/a', { consumerGroup: 'g' })).status).toBe(200);
    expect((await audit('cursor.pause')).at(-1)).toMatchObject({ actor: 'alice', target: `${a}/g`, reason: 'poison message' });
    expect((await audit('cursor.resume')).at(-1)).toMatchObject({ actor: 'alice', target: `${a}/g`, reason: 'fixed' });
  });

  it('resumes by itself once `until` has passed', async () => {
    await pushMany(app.api, 'pause.until', 'p', 1);
    const [{ id }] = (await app.api.get('/api/v1/resources/queues/pause.until')).body.partitions;
    await app.api.post(`/api/v1/cursors/${id}/g/pause`, { paused: true, reason: 'short', until: new Date(Date.now() + 800).toISOString() });
    expect((await popQueue(app.api, 'pause.until', { consumerGroup: 'g' })).status).toBe(204);
    await sleep(1000);
    expect((await popQueue(app.api, 'pause.until', { consumerGroup: 'g' })).status).toBe(200);
    expect((await app.api.get('/api/v1/consumer-groups/g')).body.queues.find((q: any) => q.queueName === 'pause.until').partitions[0].paused).toBe(false);
  });

  it('answers 404 for an unknown partition and 400 for a bad body', async () => {
    expect((await app.api.post('/api/v1/cursors/01a2291d-98d7-78cc-b1bd-7f3819ba7725/g/pause', { paused: true })).status).toBe(404);
    expect((await app.api.post('/api/v1/cursors/nope/g/pause', { paused: true })).status).toBe(404);
    expect((await app.api.post('/api/v1/cursors/01a2291d-98d7-78cc-b1bd-7f3819ba7725/g/pause', { paused: 'yes' })).status).toBe(400);
  });
});

describe('the per-message management route', () => {
  it('shows where a message stands in every group, with offset, segment time and payload', async () => {
    await pushMany(app.api, 'msg.route', 'p', 2);
    const done = await popQueue(app.api, 'msg.route', { consumerGroup: 'done-group', batch: 1 });
    await ackAll(app.api, done);
    const leased = await popQueue(app.api, 'msg.route', { consumerGroup: 'lease-group', batch: 1 });
    await popQueue(app.api, 'msg.route', { consumerGroup: 'pending-group', subscriptionMode: 'new' });
    const res = await app.api.get(`/api/v1/messages/${done.body.partitionId}/p-0`);
    expect(res.body).toMatchObject({
      id: done.body.messages[0].id, transactionId: 'p-0', partitionId: done.body.partitionId, partition: 'p', queue: 'msg.route',
      offset: 1, createdAt: done.body.messages[0].createdAt, traceId: null, producerSub: null, data: { seq: 0 },
    });
    expect(res.body.consumerGroups).toEqual([
      { name: 'done-group', state: 'done', deliveries: 1, failures: 0, lastError: null, leaseId: null, leaseExpiresAt: null, lease: null, attempts: [] },
      {
        name: 'lease-group', state: 'leased', deliveries: 1, failures: 0, lastError: null, leaseId: leased.body.leaseId, leaseExpiresAt: expect.stringMatching(/Z$/),
        lease: { leaseId: leased.body.leaseId, holder: expect.any(String), expiresAt: expect.stringMatching(/Z$/), expired: false }, attempts: [],
      },
      { name: 'pending-group', state: 'done', deliveries: 0, failures: 0, lastError: null, leaseId: null, leaseExpiresAt: null, lease: null, attempts: [] },
    ]);
    const second = await app.api.get(`/api/v1/messages/${done.body.partitionId}/p-1`);
    expect(second.body.consumerGroups.map((g: any) => [g.name, g.state])).toEqual([['done-group', 'pending'], ['lease-group', 'pending'], ['pending-group', 'done']]);
    expect((await app.api.get(`/api/v1/messages/${done.body.partitionId}/nope`)).status).toBe(404);
    expect((await app.api.get('/api/v1/messages/not-a-uuid/p-0')).status).toBe(404);
  });
});

describe('dead letters listing', () => {
  it('filters by queue, group and partition, pages, newest failure first', async () => {
    await app.api.post('/api/v1/configure', { queue: 'dlq.list', options: { retryLimit: 0, retryDelay: 0 } });
    for (const p of ['a', 'b']) await pushMany(app.api, 'dlq.list', p, 2);
    for (let i = 0; i < 4; i++) {
      const r = await popQueue(app.api, 'dlq.list', { consumerGroup: 'g', batch: 1 });
      await ackAll(app.api, r, 'failed', `fail ${i}`);
    }
    const all = await app.api.get('/api/v1/dlq?queue=dlq.list&consumerGroup=g');
    expect(all.body.pagination.total).toBe(4);
    expect(all.body.messages.map((m: any) => m.errorMessage)).toEqual(['fail 3', 'fail 2', 'fail 1', 'fail 0']);
    const page = await app.api.get('/api/v1/dlq?queue=dlq.list&limit=1&offset=1');
    expect(page.body.messages.map((m: any) => m.errorMessage)).toEqual(['fail 2']);
    expect(page.body.pagination).toEqual({ limit: 1, offset: 1, total: 4 });
    expect((await app.api.get('/api/v1/dlq?queue=dlq.list&partition=a')).body.pagination.total).toBe(2);
    expect((await app.api.get('/api/v1/dlq?limit=-1')).status).toBe(400);
  });
});
