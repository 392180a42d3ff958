// The routes around the pop: consumer groups, subscription, deletes, pause, set-aside of a poison
// message, the message route and its deliveries (seek: tests/seek.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, expireLease, partitionIdsOf, pop, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const audit = (action: string) =>
  app.db.query<any>(
    'select actor, target, reason, result, details from queen.audit_log where action = $1 order by id',
    [action],
  );
const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
const partitionIds = (queue: string) => partitionIdsOf(app.api, queue);
const ack = (m: any, leaseId: string | null, status = 'completed') =>
  app.api.post('/api/v1/ack', {
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    consumerGroup: m.consumerGroup,
    leaseId,
    status,
    error: status === 'failed' ? 'boom' : null,
  });
const expire = (leaseId: string) => expireLease(app.db, leaseId);

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
    expect(newbie).toMatchObject({
      queueName: 'cg.list',
      totalLag: 0,
      subscription: { mode: 'new', startAt: expect.stringMatching(/Z$/) },
    });
  });

  it('detail per queue, per partition: committed offset, head, lag, lease and paused; 404 for an unknown group', async () => {
    await pushMany(app.api, 'cg.detail', 'p', 4);
    const r = await popQueue(app.api, 'cg.detail', { consumerGroup: 'detailed', batch: 2 });
    const res = await app.api.get('/api/v1/consumer-groups/detailed');
    expect(res.body).toEqual({
      consumerGroup: 'detailed',
      queues: [
        {
          queueName: 'cg.detail',
          totalLag: 4,
          partitions: [
            {
              partitionId: r.body.partitionId,
              partition: 'p',
              committedOffset: 0,
              headOffset: 4,
              lag: 4,
              paused: false,
              lease: {
                leaseId: r.body.leaseId,
                expiresAt: expect.stringMatching(/Z$/),
                holder: expect.any(String),
                live: true,
              },
            },
          ],
        },
      ],
    });
    expect((await app.api.get('/api/v1/consumer-groups/ghost')).status).toBe(404);
  });

  it('subscription: creates or moves the durable record; older clients move every record with subscriptionTimestamp', async () => {
    await pushMany(app.api, 'cg.sub', 'p', 2);
    const created = await app.api.post('/api/v1/consumer-groups/subscriber/subscription', {
      queue: 'cg.sub',
      subscriptionMode: 'new',
    });
    expect(created.body).toMatchObject({
      success: true,
      consumerGroup: 'subscriber',
      queueName: 'cg.sub',
      mode: 'new',
    });
    expect((await popQueue(app.api, 'cg.sub', { consumerGroup: 'subscriber' })).status).toBe(204);

    await pushMany(app.api, 'cg.sub2', 'p', 2);
    await app.api.post('/api/v1/consumer-groups/mover/subscription', { queue: 'cg.sub2', subscriptionMode: 'new' });
    const moved = await app.api.post('/api/v1/consumer-groups/mover/subscription', {
      subscriptionTimestamp: '2000-01-01T00:00:00Z',
    });
    expect(moved.body).toMatchObject({ success: true, subscriptionsUpdated: 1 });
    expect((await popQueue(app.api, 'cg.sub2', { consumerGroup: 'mover' })).body.messages).toHaveLength(2);
    expect(
      (await app.api.post('/api/v1/consumer-groups/x/subscription', { queue: 'q', subscriptionFrom: 'soon' })).status,
    ).toBe(400);
  });

  it('delete a group on one queue or everywhere, with or without its subscription records', async () => {
    await pushMany(app.api, 'cg.del.a', 'p', 1);
    await pushMany(app.api, 'cg.del.b', 'p', 1);
    for (const q of ['cg.del.a', 'cg.del.b'])
      await popQueue(app.api, q, { consumerGroup: 'doomed', subscriptionFrom: '2000-01-01T00:00:00Z' });
    const one = await app.api.del('/api/v1/consumer-groups/doomed/queues/cg.del.a?deleteMetadata=false');
    expect(one.body).toEqual({ success: true, consumerGroup: 'doomed', deletedPartitions: 1, metadataDeleted: false });
    expect(await app.db.query("select 1 from queen.subscriptions where consumer_group = 'doomed'")).toHaveLength(2);
    const all = await app.api.del('/api/v1/consumer-groups/doomed?reason=retired');
    expect(all.body).toEqual({ success: true, consumerGroup: 'doomed', deletedPartitions: 1, metadataDeleted: true });
    expect(await app.db.query("select 1 from queen.subscriptions where consumer_group = 'doomed'")).toHaveLength(0);
    expect(await app.db.query("select 1 from queen.cursors where consumer_group = 'doomed'")).toHaveLength(0);
    expect((await audit('consumer_group.delete')).map((a: any) => [a.target, a.reason])).toEqual([
      ['doomed@cg.del.a', null],
      ['doomed', 'retired'],
    ]);
    expect((await app.api.del('/api/v1/consumer-groups/doomed?deleteMetadata=maybe')).status).toBe(400);
  });
});

describe('pause', () => {
  it('a paused (partition, group) is skipped by pops; resuming restores it; both are audited', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'pause.q', p, 1);
    const partitions = (await app.api.get('/api/v1/resources/queues/pause.q')).body.partitions;
    const a = partitions.find((p: any) => p.name === 'a').id;
    const paused = await app.api.post(
      `/api/v1/cursors/${a}/g/pause`,
      { paused: true, reason: 'poison message' },
      { headers: { 'x-queen-actor': 'alice' } },
    );
    expect(paused.body).toEqual({
      partitionId: a,
      consumerGroup: 'g',
      paused: true,
      reason: 'poison message',
      until: null,
    });
    const r = await popQueue(app.api, 'pause.q', { consumerGroup: 'g', partitions: 0 });
    expect(r.body.messages.map((m: any) => m.partition)).toEqual(['b']);
    expect((await pop(app.api, '/queue/pause.q/partition/a', { consumerGroup: 'g' })).status).toBe(204);
    expect((await popQueue(app.api, 'pause.q', { consumerGroup: 'other', partitions: 0 })).body.messages).toHaveLength(
      2,
    ); // other groups unaffected
    await app.api.post(
      `/api/v1/cursors/${a}/g/pause`,
      { paused: false, reason: 'fixed' },
      { headers: { 'x-queen-actor': 'alice' } },
    );
    expect((await pop(app.api, '/queue/pause.q/partition/a', { consumerGroup: 'g' })).status).toBe(200);
    expect((await audit('cursor.pause')).at(-1)).toMatchObject({
      actor: 'alice',
      target: `${a}/g`,
      reason: 'poison message',
    });
    expect((await audit('cursor.resume')).at(-1)).toMatchObject({ actor: 'alice', target: `${a}/g`, reason: 'fixed' });
  });

  it('resumes by itself once `until` has passed', async () => {
    await pushMany(app.api, 'pause.until', 'p', 1);
    const [{ id }] = (await app.api.get('/api/v1/resources/queues/pause.until')).body.partitions;
    await app.api.post(`/api/v1/cursors/${id}/g/pause`, {
      paused: true,
      reason: 'short',
      until: new Date(Date.now() + 800).toISOString(),
    });
    expect((await popQueue(app.api, 'pause.until', { consumerGroup: 'g' })).status).toBe(204);
    await sleep(1000);
    expect((await popQueue(app.api, 'pause.until', { consumerGroup: 'g' })).status).toBe(200);
    expect(
      (await app.api.get('/api/v1/consumer-groups/g')).body.queues.find((q: any) => q.queueName === 'pause.until')
        .partitions[0].paused,
    ).toBe(false);
  });

  it('answers 404 for an unknown partition and 400 for a bad body', async () => {
    expect(
      (await app.api.post('/api/v1/cursors/01a2291d-98d7-78cc-b1bd-7f3819ba7725/g/pause', { paused: true })).status,
    ).toBe(404);
    expect((await app.api.post('/api/v1/cursors/nope/g/pause', { paused: true })).status).toBe(404);
    expect(
      (await app.api.post('/api/v1/cursors/01a2291d-98d7-78cc-b1bd-7f3819ba7725/g/pause', { paused: 'yes' })).status,
    ).toBe(400);
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
      id: done.body.messages[0].id,
      transactionId: 'p-0',
      partitionId: done.body.partitionId,
      partition: 'p',
      queue: 'msg.route',
      offset: 1,
      createdAt: done.body.messages[0].createdAt,
      traceId: null,
      producerSub: null,
      data: { seq: 0 },
    });
    expect(res.body.consumerGroups).toEqual([
      {
        name: 'done-group',
        state: 'done',
        deliveries: 1,
        failures: 0,
        lastError: null,
        leaseId: null,
        leaseExpiresAt: null,
        lease: null,
        attempts: [],
      },
      {
        name: 'lease-group',
        state: 'leased',
        deliveries: 1,
        failures: 0,
        lastError: null,
        leaseId: leased.body.leaseId,
        leaseExpiresAt: expect.stringMatching(/Z$/),
        lease: {
          leaseId: leased.body.leaseId,
          holder: expect.any(String),
          expiresAt: expect.stringMatching(/Z$/),
          expired: false,
        },
        attempts: [],
      },
      {
        name: 'pending-group',
        state: 'done',
        deliveries: 0,
        failures: 0,
        lastError: null,
        leaseId: null,
        leaseExpiresAt: null,
        lease: null,
        attempts: [],
      },
    ]);
    const second = await app.api.get(`/api/v1/messages/${done.body.partitionId}/p-1`);
    expect(second.body.consumerGroups.map((g: any) => [g.name, g.state])).toEqual([
      ['done-group', 'pending'],
      ['lease-group', 'pending'],
      ['pending-group', 'done'],
    ]);
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

describe('a group deleted everywhere', () => {
  const configure = (queue: string, options: Record<string, unknown>) =>
    app.api.post('/api/v1/configure', { queue, options });

  it('a group deleted everywhere is not brought back by a later configure of a queue of its scope', async () => {
    await pop(app.api, '', { namespace: 'gone', consumerGroup: 'leaver', subscriptionMode: 'new' });
    await app.api.push([{ queue: 'gone.one', payload: 1 }]);
    expect((await app.api.get('/api/v1/consumer-groups/leaver')).status).toBe(200);
    expect((await app.api.del('/api/v1/consumer-groups/leaver?deleteMetadata=true')).status).toBe(200);
    await configure('gone.one', {});
    await configure('gone.two', {});
    expect((await app.api.get('/api/v1/consumer-groups/leaver')).status).toBe(404);
  });
});

describe('set aside a poison message', () => {
  const admin = { headers: { 'x-queen-actor': 'oncall' } };
  const setAside = (partitionId: string, group: string, body: unknown) =>
    app.api.post(`/api/v1/cursors/${partitionId}/${group}/set-aside`, body, admin);

  it('moves the message its lease is stuck on to the dead letters, fenced against that lease, and the next pop delivers the next one', async () => {
    await pushMany(app.api, 'w20.poison', 'p', 3);
    const { p } = await partitionIds('w20.poison');
    const first = await popQueue(
      app.api,
      'w20.poison',
      { consumerGroup: 'g', batch: 1, leaseSeconds: 120 },
      as('worker-a'),
    );
    expect(first.body.messages[0].transactionId).toBe('p-0');
    const leaseId = first.body.leaseId;

    // fenced: refused unless the lease the operator saw is the one on it
    const stale = await setAside(p, 'g', {
      action: 'dead-letter',
      reason: 'crashes',
      leaseId: '00000000-0000-7000-8000-000000000000',
    });
    expect(stale.status).toBe(409);
    expect(stale.body.currentLeaseId).toBe(leaseId);
    expect((await setAside(p, 'g', { action: 'dead-letter', leaseId })).status).toBe(400); // no reason
    expect((await setAside(p, 'g', { action: 'dead-letter', reason: 'x', transactionId: 'nope' })).status).toBe(404);

    const res = await setAside(p, 'g', { action: 'dead-letter', reason: 'crashes the consumer', leaseId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      queue: 'w20.poison',
      partition: 'p',
      group: 'g',
      offset: 1,
      transactionId: 'p-0',
      committed: 1,
      holder: 'worker-a',
      leaseEnded: true,
      leaseId,
    });

    // the holder's ack with the ended lease is refused; the next pop delivers p-1
    expect((await ack(first.body.messages[0], leaseId)).body[0]).toMatchObject({ success: true }); // offset done already: idempotent
    const next = await popQueue(app.api, 'w20.poison', { consumerGroup: 'g', batch: 1 }, as('worker-b'));
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['p-1']);

    const dead = await app.db.query<any>(
      'select "offset", error_message from queen.dead_letters where partition_id = $1 and consumer_group = $2',
      [p, 'g'],
    );
    expect(dead.map((d) => Number(d.offset))).toEqual([1]);
    const dlq = await app.api.get('/api/v1/dlq?queue=w20.poison');
    expect(dlq.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const [audit] = await app.db.query<any>(
      "select actor, reason, target, details from queen.audit_log where action = 'message.dead_letter' order by id desc limit 1",
    );
    expect(audit).toMatchObject({ actor: 'oncall', reason: 'crashes the consumer', target: `${p}/p-0` });
    expect(audit.details).toMatchObject({
      queue: 'w20.poison',
      partitionId: p,
      group: 'g',
      offset: 1,
      leaseId,
      leaseEnded: true,
      holder: 'worker-a',
    });
    // found from the partition's audit filter, like every action on it
    expect(
      (await app.api.get(`/api/v1/audit?partitionId=${p}&group=g`)).body.entries.map((e: any) => e.action),
    ).toContain('message.dead_letter');
    // done with it now
    expect((await setAside(p, 'g', { action: 'skip', reason: 'again', transactionId: 'p-0' })).status).toBe(409);
  });

  it('skips the first message of an expired, unreclaimed lease, counts the expiry, and another lease on it refuses the ack', async () => {
    await pushMany(app.api, 'w20.skip', 'p', 3);
    const { p } = await partitionIds('w20.skip');
    const first = await popQueue(
      app.api,
      'w20.skip',
      { consumerGroup: 'g', batch: 2, leaseSeconds: 120 },
      as('worker-a'),
    );
    await expire(first.body.leaseId);
    const res = await setAside(p, 'g', { action: 'skip', reason: 'poison', leaseId: first.body.leaseId });
    expect(res.body).toMatchObject({ offset: 1, committed: 1, leaseExpired: true, leaseEnded: true });
    const [c] = await app.db.query<any>(
      'select lease_id, lease_expiries::int, dead_letters::int from queen.cursors where partition_id = $1',
      [p],
    );
    expect(c).toEqual({ lease_id: null, lease_expiries: 1, dead_letters: 0 });
    // the rest of the span (p-1) is delivered again, then p-2
    const next = await popQueue(app.api, 'w20.skip', { consumerGroup: 'g', batch: 5 });
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['p-1', 'p-2']);
    expect((await ack(first.body.messages[1], first.body.leaseId)).body[0]).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    // no lease on a message: leaseId null says "none", and a pending message is set aside by its transaction id
    await pushMany(app.api, 'w20.skip', 'p', 1, 'p', 3);
    const byId = await setAside(p, 'other', { action: 'skip', reason: 'x', transactionId: 'p-3', leaseId: null });
    expect(byId.status).toBe(404); // group never reached the partition
  });

  it("one of a holder's ack and an operator's set-aside of the same message wins, never both, across several consumers", async () => {
    for (const part of ['a', 'b', 'c', 'd']) await pushMany(app.api, 'w20.race', part, 2);
    const ids = await partitionIds('w20.race');
    const pops = await Promise.all(
      ['a', 'b', 'c', 'd'].map((part, i) =>
        app.api.get(
          `/api/v1/pop/queue/w20.race/partition/${part}?consumerGroup=g&batch=1&leaseSeconds=120`,
          as(`worker-${i}`),
        ),
      ),
    );
    const results = await Promise.all(
      pops.map(async (r) => {
        const m = r.body.messages[0];
        const [acked, aside] = await Promise.all([
          ack(m, r.body.leaseId),
          setAside(m.partitionId, 'g', {
            action: 'dead-letter',
            reason: 'race',
            leaseId: r.body.leaseId,
            transactionId: m.transactionId,
          }),
        ]);
        return { acked: acked.body[0].success, aside: aside.status === 200, m };
      }),
    );
    for (const r of results) {
      // an ack after the set-aside is of an offset already done (idempotent); a set-aside after the ack is refused
      expect(r.acked || r.aside).toBe(true);
      const dead = await app.db.query(
        'select 1 from queen.dead_letters where partition_id = $1 and consumer_group = $2',
        [r.m.partitionId, 'g'],
      );
      expect(dead.length).toBe(r.aside ? 1 : 0);
    }
    expect(Object.keys(ids)).toHaveLength(4);
    for (const part of ['a', 'b', 'c', 'd']) {
      const next = await app.api.get(
        `/api/v1/pop/queue/w20.race/partition/${part}?consumerGroup=g&batch=5&leaseSeconds=5`,
      );
      expect(next.body.messages.map((m: any) => m.transactionId)).toEqual([`${part}-1`]);
    }
  });
});

describe('the deliveries of a message', () => {
  it('the message lists every delivery: holder, lease, claimed, and how each ended', async () => {
    await pushMany(app.api, 'w20.deliveries', 'p', 1);
    const { p } = await partitionIds('w20.deliveries');
    const one = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-1'));
    await expire(one.body.leaseId);
    const two = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-2'));
    await ack(two.body.messages[0], two.body.leaseId, 'failed');
    await app.db.query('update queen.cursors set retry_not_before = null where partition_id = $1', [p]);
    await app.db.query('update queen.backlog set blocked_until = null where partition_id = $1', [p]);
    const three = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-3'));
    const four = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'other', leaseSeconds: 60 }, as('w-4'));
    await app.api.post(`/api/v1/leases/${four.body.leaseId}/release`, { reason: 'x' });
    const five = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'other', leaseSeconds: 60 }, as('w-5'));
    await ack(three.body.messages[0], three.body.leaseId);

    const m = await app.api.get(`/api/v1/messages/${p}/p-0`);
    const listed = m.body.deliveries.map((d: any) => [d.group, d.holder, d.leaseId, d.ended]);
    expect(listed).toEqual([
      ['other', 'w-5', five.body.leaseId, 'live'],
      ['other', 'w-4', four.body.leaseId, 'released'],
      ['g', 'w-3', three.body.leaseId, 'acked'],
      ['g', 'w-2', two.body.leaseId, 'failed'],
      ['g', 'w-1', one.body.leaseId, 'expired'],
    ]);
    // as many as the group's counters say it was delivered
    expect(m.body.consumerGroups.find((g: any) => g.name === 'g').deliveries).toBe(3);
  });

  it('forgets deliveries past DELIVERY_RETENTION_HOURS, but not one whose lease is still held', async () => {
    await pushMany(app.api, 'w20.forget', 'p', 2);
    const a = await app.api.get('/api/v1/pop/queue/w20.forget?consumerGroup=g&batch=1&leaseSeconds=600');
    await app.api.post('/api/v1/ack', {
      transactionId: 'p-0',
      partitionId: a.body.partitionId,
      consumerGroup: 'g',
      leaseId: a.body.leaseId,
    });
    const b = await app.api.get('/api/v1/pop/queue/w20.forget?consumerGroup=g&batch=1&leaseSeconds=600');
    await app.db.query("update queen.deliveries set claimed_at = now() - interval '25 hours' where partition_id = $1", [
      a.body.partitionId,
    ]);
    const [{ n }] = await app.db.query<any>('select queen.forget_deliveries(24, 1000) as n');
    expect(n).toBeGreaterThanOrEqual(1);
    const left = await app.db.query<any>('select lease_id from queen.deliveries where partition_id = $1', [
      a.body.partitionId,
    ]);
    expect(left.map((d) => d.lease_id)).toEqual([b.body.leaseId]);
  });
});
