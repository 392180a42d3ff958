// GET /api/v1/resources/{overview,namespaces,tasks} and GET /api/v1/consumer-groups/lagging: figures
// that must agree with the other routes and the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
});
afterAll(() => app.stop());

const join = (group: string, queue: string) =>
  app.api.post(`/api/v1/consumer-groups/${group}/subscription`, { queue, subscriptionMode: 'all' });

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
    const stat = {
      avg: expect.any(Number),
      median: expect.any(Number),
      min: expect.any(Number),
      max: expect.any(Number),
    };
    expect(first.body).toEqual({
      queues: queues.length,
      partitions: sum((q) => q.partitions),
      namespaces: new Set(queues.map((q: any) => q.namespace)).size,
      tasks: new Set(queues.map((q: any) => q.task)).size,
      messages: {
        total: sum((q) => q.messages.total),
        pending: sum((q) => q.messages.pending),
        processing: sum((q) => q.messages.processing),
        completed: 2,
        failed: 0,
        deadLetter: 0,
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
    expect(ns.body.namespaces.find((n: any) => n.namespace === 'rsn')).toEqual({
      namespace: 'rsn',
      queues: 2,
      partitions: 3,
      messages: { total: 4, pending: 4 },
    });
    const tasks = await app.api.get('/api/v1/resources/tasks');
    expect(tasks.body.tasks.find((t: any) => t.task === 'beta')).toEqual({
      task: 'beta',
      queues: 1,
      partitions: 2,
      messages: { total: 2, pending: 2 },
    });
  });
});

describe('GET /api/v1/consumer-groups/lagging', () => {
  it('lists the (group, partition) pairs with something unconsumed for longer than minLagSeconds, agreeing with the group routes and the database', async () => {
    await pushMany(app.api, 'lag.q', 'a', 3, 'a');
    await pushMany(app.api, 'lag.q', 'b', 1, 'b');
    await join('laggard', 'lag.q');
    for (let i = 0; i < 2; i++)
      await ackAll(app.api, await popQueue(app.api, 'lag.q', { consumerGroup: 'keeper', batch: 10 }));
    await sleep(1100);
    const res = await app.api.get('/api/v1/consumer-groups/lagging?minLagSeconds=1');
    expect(res.status).toBe(200);
    const ours = res.body.filter((r: any) => r.queue_name === 'lag.q');
    expect(ours.map((r: any) => [r.consumer_group, r.partition_name, r.offset_lag]).sort()).toEqual([
      ['laggard', 'a', 3],
      ['laggard', 'b', 1],
    ]);
    expect(ours[0]).toEqual({
      consumer_group: 'laggard',
      queue_name: 'lag.q',
      partition_name: expect.any(String),
      partition_id: expect.any(String),
      offset_lag: expect.any(Number),
      time_lag_seconds: expect.any(Number),
      oldest_unconsumed_at: expect.stringMatching(/Z$/),
      last_consumed_at: null,
    });
    expect(ours.every((r: any) => r.time_lag_seconds >= 1)).toBe(true);

    // the per-partition lag of GET /consumer-groups/:group and the total of GET /consumer-groups
    const detail = (await app.api.get('/api/v1/consumer-groups/laggard')).body.queues.find(
      (q: any) => q.queueName === 'lag.q',
    );
    for (const p of detail.partitions)
      expect(ours.find((r: any) => r.partition_id === p.partitionId)?.offset_lag).toBe(p.lag);
    const total = (await app.api.get('/api/v1/consumer-groups')).body.find(
      (g: any) => g.name === 'laggard' && g.queueName === 'lag.q',
    ).totalLag;
    expect(ours.reduce((n: number, r: any) => n + r.offset_lag, 0)).toBe(total);

    // every pair the database counts as behind and old enough, and no other
    const everything = (await app.api.get('/api/v1/consumer-groups/lagging?minLagSeconds=0&limit=10000')).body;
    const [{ n }] = await app.db.query<{
      n: number;
    }>(`select count(*)::int as n from queen.cursors c join queen.partitions p on p.id = c.partition_id
      where p.head_offset > c.committed_offset`);
    expect(everything).toHaveLength(n);
    expect(
      (await app.api.get('/api/v1/consumer-groups/lagging')).body.filter((r: any) => r.queue_name === 'lag.q'),
    ).toEqual([]); // default 3600 s
  });

  it('refuses a bad minLagSeconds or limit with a 400 naming it', async () => {
    for (const [query, field] of [
      ['minLagSeconds=-1', 'minLagSeconds'],
      ['minLagSeconds=soon', 'minLagSeconds'],
      ['limit=0', 'limit'],
    ]) {
      const res = await app.api.get(`/api/v1/consumer-groups/lagging?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: `));
    }
  });
});
