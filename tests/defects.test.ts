// Regression tests for the defects a review reproduced (issue 12), one per defect.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany, sleep } from './support/broker';
import { startServer } from './support/server';
import { client } from './support/http';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const configure = (queue: string, options: Record<string, unknown>) => app.api.post('/api/v1/configure', { queue, options });
const ack = (reply: any, i: number, status: 'completed' | 'failed', group: string) =>
  app.api.post('/api/v1/ack', {
    transactionId: reply.body.messages[i].transactionId, partitionId: reply.body.messages[i].partitionId,
    leaseId: reply.body.leaseId, status, consumerGroup: group, error: status === 'failed' ? 'boom' : null,
  });

describe('issue 12', () => {
  it('1. a discovery consumer subscribed with `new` gets the first messages of a queue created after it parked', async () => {
    const parked = pop(app.api, '', { namespace: 'later', consumerGroup: 'scoped', subscriptionMode: 'new', wait: true, timeout: 8000 });
    await sleep(600);
    expect((await app.api.push([{ queue: 'later.born', partition: 'p', payload: { first: true }, transactionId: 'born-1' }])).status).toBe(201);
    const r = await parked;
    expect(r.status).toBe(200);
    expect(r.body.messages.map((m: any) => m.transactionId)).toEqual(['born-1']);
    // A second queue of the scope, created while nobody waits: its first message is not skipped either.
    await app.api.push([{ queue: 'later.second', partition: 'p', payload: 1, transactionId: 'second-1' }]);
    const again = await pop(app.api, '', { namespace: 'later', consumerGroup: 'scoped', subscriptionMode: 'new', batch: 10 });
    expect(again.body.messages.map((m: any) => m.transactionId)).toEqual(['second-1']);
  });

  it('2. a transaction that pushed to a partition and acks on it neither deadlocks with nor delays a failed ack and a redelivering pop there', async () => {
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
      const failed = await b.query(`select * from queen.ack($1::jsonb, null)`, [JSON.stringify([
        { transactionId: m.transactionId, partitionId: m.partitionId, status: 'failed', error: 'boom', leaseId: g.body.leaseId, consumerGroup: 'g' }])]);
      expect(failed.rows[0].success).toBe(true);
      const redelivered = await b.query(`select * from queen.pop('d2.q', null, '', '', 'g', 1, 1, false, 0, queen.uuidv7(), 'all', null, 'b', false)`);
      expect(redelivered.rows.map((r) => r.transaction_id)).toEqual([m.transactionId]);
      const acked = await a.query(`select * from queen.ack($1::jsonb, null)`, [JSON.stringify([
        { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', leaseId: h.body.leaseId, consumerGroup: 'h' }])]);
      expect(acked.rows[0].success).toBe(true);
      await a.query('commit');
    } finally {
      await a.end();
      await b.end();
    }
    expect(await app.db.query(`select 1 from queen.messages where transaction_id = 'in-tx'`)).toHaveLength(1);
  });

  it('3. after a seek back past a dead-lettered message, it is dead-lettered again and the next message is delivered', async () => {
    await configure('d3.q', { retryLimit: 1, retryDelay: 0 });
    await pushMany(app.api, 'd3.q', 'p', 2, 'd3');
    const failTwice = async () => {
      let dlq = false;
      for (let i = 0; i < 2; i++) {
        const r = await popQueue(app.api, 'd3.q', { consumerGroup: 'g', batch: 1 });
        expect(r.body.messages[0].transactionId).toBe('d3-0');
        dlq = (await ack(r, 0, 'failed', 'g')).body[0].dlq;
      }
      return dlq;
    };
    const next = async () => {
      const r = await popQueue(app.api, 'd3.q', { consumerGroup: 'g', batch: 1 });
      expect(r.body.messages[0].transactionId).toBe('d3-1');
      await ackAll(app.api, r);
      return r;
    };
    expect(await failTwice()).toBe(true);
    const first = await next();
    const before = new Date(Date.parse(first.body.messages[0].createdAt) - 1000).toISOString();
    expect((await app.api.post('/api/v1/consumer-groups/g/queues/d3.q/seek', { timestamp: before, reason: 'replay' })).status).toBe(200);
    expect(await failTwice()).toBe(true);
    await next();
    const dead = await app.db.query<{ n: number }>(`select count(*)::int as n from queen.dead_letters d join queen.cursors c
      on c.partition_id = d.partition_id and c.consumer_group = d.consumer_group join queen.queues q on q.id = c.queue_id where q.name = 'd3.q'`);
    expect(dead[0].n).toBe(1); // one row, renewed
  });

  it('4. partitions with long non-ASCII names: pushes and multi-partition pops work while notifications are sent', async () => {
    const controller = new AbortController();
    const live = await fetch(`${app.server.url}/api/v1/events`, { signal: controller.signal }); // a live view: events are sent
    const reader = live.body!.getReader();
    await reader.read(); // the stream is open: every instance knows
    try {
      const short = '分区'.repeat(10); // 20 characters, 60 bytes
      const items = Array.from({ length: 150 }, (_, i) => ({ queue: 'd4.push', partition: `${short}${i}`, payload: i }));
      const pushed = await app.api.push(items);
      expect(pushed.status).toBe(201);
      const long = '分区'.repeat(30); // 60 characters, 180 bytes
      await app.api.push(Array.from({ length: 30 }, (_, i) => ({ queue: 'd4.pop', partition: `${long}${i}`, payload: i })));
      const r = await popQueue(app.api, 'd4.pop', { partitions: 0, batch: 100 });
      expect(r.status).toBe(200);
      expect(r.body.partitionsClaimed).toBe(30);
    } finally {
      controller.abort();
    }
  });

  it('5. subscriptionFrom=now is the database\'s now, whatever the app server\'s clock says; times without a zone are refused', async () => {
    const skewed = await startServer(app.db.url, {
      NODE_OPTIONS: `--require ${path.join(__dirname, 'support', 'skewed-clock.cjs')}`,
      TEST_CLOCK_SKEW_MS: String(3600_000),
    });
    try {
      const api = client(skewed.url);
      expect((await popQueue(api, 'd5.q', { consumerGroup: 'skewed', subscriptionFrom: 'now' })).status).toBe(204);
      await pushMany(api, 'd5.q', 'p', 1, 'd5');
      const r = await popQueue(api, 'd5.q', { consumerGroup: 'skewed' });
      expect(r.status).toBe(200);
      expect(r.body.messages[0].transactionId).toBe('d5-0');
      const sub = await api.post('/api/v1/consumer-groups/later-sub/subscription', { queue: 'd5.q', subscriptionFrom: 'now' });
      const [row] = await app.db.query<{ drift: number }>(
        `select abs(extract(epoch from start_at - now()))::float8 as drift from queen.subscriptions s join queen.queues q on q.id = s.queue_id
         where q.name = 'd5.q' and s.consumer_group = 'later-sub'`);
      expect(sub.status).toBe(200);
      expect(row.drift).toBeLessThan(60);
    } finally {
      await skewed.stop();
    }
    const noZone = await app.api.post('/api/v1/consumer-groups/x/subscription', { queue: 'd5.q', subscriptionFrom: '2026-01-01T00:00:00' });
    expect(noZone.status).toBe(400);
    expect(noZone.body.error).toMatch(/^subscriptionFrom: .*zone/);
    const five = await app.api.post('/api/v1/consumer-groups/g/queues/d5.q/seek', { timestamp: '5' });
    expect(five.status).toBe(400);
    expect(five.body.error).toMatch(/timestamp/);
  });

  it('6. over-long names and ids are a 400 naming the field, and nothing is written', async () => {
    const long = 'x'.repeat(600);
    const cases: [string, () => Promise<any>, RegExp][] = [
      ['partition', () => app.api.push([{ queue: 'd6.q', partition: long, payload: 1 }]), /^items\[0\]\.partition: must be at most 512 bytes/],
      ['queue', () => app.api.push([{ queue: `d6.${long}`, payload: 1 }]), /^items\[0\]\.queue: /],
      ['transactionId', () => app.api.push([{ queue: 'd6.q', payload: 1, transactionId: long }]), /^items\[0\]\.transactionId: /],
      ['consumerGroup', () => app.api.get(`/api/v1/pop/queue/d6.q?consumerGroup=${long}`), /^consumerGroup: /],
      ['queue in the path', () => app.api.get(`/api/v1/pop/queue/${long}`), /^queue: /],
      ['namespace', () => app.api.post('/api/v1/configure', { queue: 'd6.q', namespace: '名'.repeat(200) }), /^namespace: /],
      ['ack group', () => app.api.post('/api/v1/ack', { transactionId: 't', partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: long }), /^consumerGroup: /],
    ];
    for (const [what, call, error] of cases) {
      const res = await call();
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toMatch(error);
    }
    expect(await app.db.query(`select 1 from queen.queues where name like 'd6.%'`)).toEqual([]);
  });

  it('7. a transaction\'s acks on one lease are judged as one unit, whatever their order', async () => {
    await configure('d7.q', { retryDelay: 0 });
    await pushMany(app.api, 'd7.q', 'p', 2, 'd7');
    for (const [group, order] of [['first-failed', ['failed', 'completed']], ['first-completed', ['completed', 'failed']]] as const) {
      const r = await popQueue(app.api, 'd7.q', { consumerGroup: group, batch: 2 });
      const statusOf = (tx: string) => (tx === 'd7-0' ? order[0] : order[1]);
      const res = await app.api.post('/api/v1/transaction', {
        operations: r.body.messages.map((m: any) => ({
          type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, consumerGroup: group, status: statusOf(m.transactionId),
        })),
      });
      expect(res.body, group).toMatchObject({ success: true });
    }
    const cursors = await app.db.query(`select consumer_group, committed_offset::int as committed, acked_offsets::int[] as acked, failures::int, lease_id
      from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
      where q.name = 'd7.q' and p.name = 'p' order by consumer_group`);
    expect(cursors).toEqual([
      { consumer_group: 'first-completed', committed: 1, acked: [], failures: 1, lease_id: null },
      { consumer_group: 'first-failed', committed: 0, acked: [2], failures: 1, lease_id: null },
    ]);
  });

  it('also: a failure that dead-letters holds nothing back, and force-releasing an expired lease counts it as an expiry', async () => {
    await configure('d9.q', { retryLimit: 0, retryDelay: 60_000 });
    await pushMany(app.api, 'd9.q', 'p', 2, 'd9');
    const first = await popQueue(app.api, 'd9.q', { consumerGroup: 'g', batch: 1 });
    expect((await ack(first, 0, 'failed', 'g')).body[0].dlq).toBe(true);
    const next = await popQueue(app.api, 'd9.q', { consumerGroup: 'g', batch: 1 }); // not after a minute's retry delay
    expect(next.body.messages[0].transactionId).toBe('d9-1');

    const held = await popQueue(app.api, 'd9.q', { consumerGroup: 'slow', batch: 1, leaseSeconds: 1 });
    await sleep(1200);
    expect((await app.api.post(`/api/v1/leases/${held.body.leaseId}/release`, { reason: 'gone' })).status).toBe(200);
    const [c] = await app.db.query<{ n: number }>(`select sum(c.lease_expiries)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
      where q.name = 'd9.q' and c.consumer_group = 'slow'`);
    expect(c.n).toBe(1);
    const [stats] = await app.db.query<{ n: number }>(`select sum(s.lease_expiries)::int as n from queen.group_stats s join queen.queues q on q.id = s.queue_id
      where q.name = 'd9.q' and s.consumer_group = 'slow'`);
    expect(stats.n).toBe(1); // the counters agree with the cursors
  });

  it('also: a group deleted everywhere is not brought back by a later configure of a queue of its scope', async () => {
    await pop(app.api, '', { namespace: 'gone', consumerGroup: 'leaver', subscriptionMode: 'new' });
    await app.api.push([{ queue: 'gone.one', payload: 1 }]);
    expect((await app.api.get('/api/v1/consumer-groups/leaver')).status).toBe(200);
    expect((await app.api.del('/api/v1/consumer-groups/leaver?deleteMetadata=true')).status).toBe(200);
    await configure('gone.one', {});
    await configure('gone.two', {});
    expect((await app.api.get('/api/v1/consumer-groups/leaver')).status).toBe(404);
  });

  it('also: the leases listing says how many match even on a page past the end', async () => {
    await pushMany(app.api, 'd10.q', 'p', 1, 'd10');
    await popQueue(app.api, 'd10.q', { consumerGroup: 'g' });
    const res = await app.api.get('/api/v1/leases?queue=d10.q&page=9&pageSize=10');
    expect(res.body).toMatchObject({ total: 1, leases: [] });
  });
});
