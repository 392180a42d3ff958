// GET /api/v1/resources/{overview,namespaces,tasks}, GET /api/v1/consumer-groups/lagging and the
// seek of one partition's cursor: figures that must agree with the other routes and the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
});
afterAll(() => app.stop());

const join = (group: string, queue: string) => app.api.post(`/api/v1/consumer-groups/${group}/subscription`, { queue, subscriptionMode: 'all' });

describe('resources', () => {
  it('overview: counts, lag statistics and throughput in the Queen shape, agreeing with /resources/queues', async () => {
    await pushMany(app.api, 'rs.orders.created', 'a', 3, 'a');
    await pushMany(app.api, 'rs.orders.created', 'b', 2, 'b');
    await pushMany(app.api, 'rs.billing', 'p', 1, 'p');
    await ackAll(app.api, await popQueue(app.api, 'rs.orders.created', { batch: 2 }));
    const first = await app.api.get('/api/v1/resources/overview');
    expect(first.status).toBe(200);
    const queues = (await app.api.get('/api/v1/resources/queues')).body.queues;
    const sum = (f: (q: any) => number) => queues.reduce((n: number, q: any) => n + f(q), 0);
    const stat = { avg: expect.any(Number), median: expect.any(Number), min: expect.any(Number), max: expect.any(Number) };
    expect(first.body).toEqual({
      queues: queues.length,
      partitions: sum((q) => q.partitions),
      namespaces: new Set(queues.map((q: any) => q.namespace)).size,
      tasks: new Set(queues.map((q: any) => q.task)).size,
      messages: {
        total: sum((q) => q.messages.total), pending: sum((q) => q.messages.pending), processing: sum((q) => q.messages.processing),
        completed: 2, failed: 0, deadLetter: 0,
      },
      lag: { time: stat, offset: stat },
      throughput: { ingestedPerSecond: expect.any(Number), processedPerSecond: expect.any(Number) },
      timestamp: expect.stringMatching(/Z$/),
    });
    expect(first.body.lag.offset).toEqual({ avg: 3, median: 3, min: 3, max: 3 }); // the one group: queue mode on rs.orders.created, 5 - 2
    await sleep(300);
    await pushMany(app.api, 'rs.billing', 'p', 30, 'more');
    const second = (await app.api.get('/api/v1/resources/overview')).body;
    expect(second.throughput.ingestedPerSecond).toBeGreaterThan(0);
    expect(second.messages.total).toBe(first.body.messages.total + 30);
  });

  it('namespaces and tasks: queues, partitions and message counts of each', async () => {
    await pushMany(app.api, 'rsn.alpha', 'x', 2, 'x');
    await pushMany(app.api, 'rsn.beta', 'x', 1, 'x');
    await pushMany(app.api, 'rsn.beta', 'y', 1, 'y');
    const ns = await app.api.get('/api/v1/resources/namespaces');
    expect(ns.status).toBe(200);
    expect(ns.body.namespaces.find((n: any) => n.namespace === 'rsn')).toEqual({ namespace: 'rsn', queues: 2, partitions: 3, messages: { total: 4, pending: 4 } });
    const tasks = await app.api.get('/api/v1/resources/tasks');
    expect(tasks.body.tasks.find((t: any) => t.task === 'beta')).toEqual({ task: 'beta', queues: 1, partitions: 2, messages: { total: 2, pending: 2 } });
  });
});

describe('GET /api/v1/consumer-groups/lagging', () => {
  it('lists the (group, partition) pairs with something unconsumed for longer than minLagSeconds, agreeing with the group routes and the database', async () => {
    await pushMany(app.api, 'lag.q', 'a', 3, 'a');
    await pushMany(app.api, 'lag.q', 'b', 1, 'b');
    await join('laggard', 'lag.q');
    for (let i = 0; i < 2; i++) await ackAll(app.api, await popQueue(app.api, 'lag.q', { consumerGroup: 'keeper', batch: 10 }));
    await sleep(1100);
    const res = await app.api.get('/api/v1/consumer-groups/lagging?minLagSeconds=1');
    expect(res.status).toBe(200);
    const ours = res.body.filter((r: any) => r.queue_name === 'lag.q');
    expect(ours.map((r: any) => [r.consumer_group, r.partition_name, r.offset_lag]).sort()).toEqual([['laggard', 'a', 3], ['laggard', 'b', 1]]);
    expect(ours[0]).toEqual({
      consumer_group: 'laggard', queue_name: 'lag.q', partition_name: expect.any(String), partition_id: expect.any(String),
      offset_lag: expect.any(Number), time_lag_seconds: expect.any(Number), oldest_unconsumed_at: expect.stringMatching(/Z$/), last_consumed_at: null,
    });
    expect(ours.every((r: any) => r.time_lag_seconds >= 1)).toBe(true);

    // the per-partition lag of GET /consumer-groups/:group and the total of GET /consumer-groups
    const detail = (await app.api.get('/api/v1/consumer-groups/laggard')).body.queues.find((q: any) => q.queueName === 'lag.q');
    for (const p of detail.partitions) expect(ours.find((r: any) => r.partition_id === p.partitionId)?.offset_lag).toBe(p.lag);
    const total = (await app.api.get('/api/v1/consumer-groups')).body.find((g: any) => g.name === 'laggard' && g.queueName === 'lag.q').totalLag;
    expect(ours.reduce((n: number, r: any) => n + r.offset_lag, 0)).toBe(total);

    // every pair the database counts as behind and old enough, and no other
    const everything = (await app.api.get('/api/v1/consumer-groups/lagging?minLagSeconds=0&limit=10000')).body;
    const [{ n }] = await app.db.query<{ n: number }>(`select count(*)::int as n from queen.cursors c join queen.partitions p on p.id = c.partition_id
      where p.head_offset > c.committed_offset`);
    expect(everything).toHaveLength(n);
    expect((await app.api.get('/api/v1/consumer-groups/lagging')).body.filter((r: any) => r.queue_name === 'lag.q')).toEqual([]); // default 3600 s
  });

  it('refuses a bad minLagSeconds or limit with a 400 naming it', async () => {
    for (const [query, field] of [['minLagSeconds=-1', 'minLagSeconds'], ['minLagSeconds=soon', 'minLagSeconds'], ['limit=0', 'limit']]) {
      const res = await app.api.get(`/api/v1/consumer-groups/lagging?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: `));
    }
  });
});

describe('POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek', () => {
  const cursors = (queue: string, group: string) =>
    app.db.query<any>(`select p.name, c.committed_offset::int as committed, c.lease_id from queen.cursors c
      join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
      where q.name = $1 and c.consumer_group = $2 order by p.name`, [queue, group]);
  const url = (group: string, queue: string, partition: string) => `/api/v1/consumer-groups/${group}/queues/${queue}/partitions/${partition}/seek`;

  it('moves exactly one cursor, ends its lease, keeps the figures right, and is audited like the queue-wide seek', async () => {
    await pushMany(app.api, 'ps.q', 'a', 3, 'a');
    await pushMany(app.api, 'ps.q', 'b', 2, 'b');
    const held = await popQueue(app.api, 'ps.q', { consumerGroup: 'seeker', batch: 1 });
    const heldPartition = held.body.messages[0].transactionId[0];
    const before = await cursors('ps.q', 'seeker');
    const res = await app.api.post(url('seeker', 'ps.q', heldPartition), { toEnd: true, reason: 'skip a poison span' });
    expect(res.status).toBe(200);
    const head = heldPartition === 'a' ? 3 : 2;
    expect(res.body).toEqual({ success: true, consumerGroup: 'seeker', queueName: 'ps.q', partitionName: heldPartition, cursorMovedTo: head });
    const after = await cursors('ps.q', 'seeker');
    expect(after.find((c: any) => c.name === heldPartition)).toEqual({ name: heldPartition, committed: head, lease_id: null });
    expect(after.filter((c: any) => c.name !== heldPartition)).toEqual(before.filter((c: any) => c.name !== heldPartition));
    const group = (await app.api.get('/api/v1/consumer-groups')).body.find((g: any) => g.name === 'seeker' && g.queueName === 'ps.q');
    expect(group.totalLag).toBe(5 - head);
    const replay = await popQueue(app.api, 'ps.q', { consumerGroup: 'seeker', batch: 10, partitions: 5 });
    expect(replay.body.messages.every((m: any) => m.transactionId[0] !== heldPartition)).toBe(true);
    const audit = await app.db.query<any>(`select target_type, target, reason, result, details from queen.audit_log where action = 'cursor.seek'`);
    expect(audit).toEqual([{
      target_type: 'consumer_group', target: `seeker@ps.q/${heldPartition}`, reason: 'skip a poison span', result: 'ok',
      details: expect.objectContaining({ toEnd: true, partition: heldPartition, from: 0, to: head, cursors: 1 }),
    }]);
  });

  it('seeks back to a timestamp, replaying from there on that partition only', async () => {
    await pushMany(app.api, 'ps.back', 'a', 2, 'old');
    await sleep(50);
    const middle = new Date().toISOString();
    await sleep(50);
    await pushMany(app.api, 'ps.back', 'a', 2, 'new');
    await ackAll(app.api, await popQueue(app.api, 'ps.back', { consumerGroup: 'rewinder', batch: 10 }));
    const res = await app.api.post(url('rewinder', 'ps.back', 'a'), { timestamp: middle });
    expect(res.body.cursorMovedTo).toBe(2);
    expect((await popQueue(app.api, 'ps.back', { consumerGroup: 'rewinder', batch: 10 })).body.messages.map((m: any) => m.transactionId)).toEqual(['new-0', 'new-1']);
  });

  it('404 for an unknown queue or partition, 400 for a bad body, and nothing written', async () => {
    await pushMany(app.api, 'ps.bad', 'a', 1, 'a');
    const before = await app.db.query<any>(`select count(*)::int as n from queen.audit_log`);
    for (const [queue, partition] of [['ps.bad', 'nope'], ['nope', 'a']]) {
      const res = await app.api.post(url('g', queue, partition), { toEnd: true });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'Partition not found' });
    }
    for (const [body, field] of [[{ toEnd: false }, 'toEnd'], [{ timestamp: 'yesterday' }, 'timestamp'], [{ toEnd: true, reason: 'x'.repeat(501) }, 'reason']] as const) {
      const res = await app.api.post(url('g', 'ps.bad', 'a'), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}|^body`));
    }
    expect((await app.api.post(url('g', 'ps.bad', 'x'.repeat(600)), { toEnd: true })).status).toBe(400);
    expect(await app.db.query<any>(`select count(*)::int as n from queen.audit_log`)).toEqual(before);
  });
});
