// /metrics/prometheus and /metrics after a scripted workload: every figure equals what the database
// says, counted here from its tables; the scrape parses strictly; the message counters survive a
// restart of the instance; every route shows in the request histogram under its pattern.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep } from './support/broker';
import { client } from './support/http';
import { parsePrometheus, valueOf, type Family } from './support/prometheus';
import { startServer, type TestServer } from './support/server';

const GROUPS = [
  ['obs.orders', 'billing'],
  ['obs.orders', 'shipping'],
  ['obs.audit', 'billing'],
  ['obs.audit', 'shipping'],
] as const;

describe('metrics', () => {
  let app: TestApp;
  let server: TestServer;
  beforeAll(async () => {
    app = await startApp();
    server = app.server;
    const api = app.api;
    expect(
      (await api.post('/api/v1/configure', { queue: 'obs.orders', options: { retryLimit: 0, deadLetterQueue: true } }))
        .status,
    ).toBe(200);
    for (const p of ['p0', 'p1', 'p2']) await pushMany(api, 'obs.orders', p, 2);
    for (const p of ['a0', 'a1']) await pushMany(api, 'obs.audit', p, 3);

    // billing: 6 delivered from obs.orders, one fails into the dead letters, 5 completed
    const billing = await popQueue(api, 'obs.orders', {
      consumerGroup: 'billing',
      partitions: 10,
      batch: 100,
      wait: false,
    });
    expect(billing.body.messages).toHaveLength(6);
    const [failing, ...rest] = billing.body.messages;
    const acked = await api.post('/api/v1/ack/batch', {
      consumerGroup: 'billing',
      acknowledgments: [
        {
          transactionId: failing.transactionId,
          partitionId: failing.partitionId,
          leaseId: failing.leaseId,
          status: 'failed',
          error: 'boom',
        },
        ...rest.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status: 'completed',
        })),
      ],
    });
    expect(acked.status).toBe(200);
    // shipping: a 1-second lease on one partition of obs.orders, never acked
    const shipping = await popQueue(api, 'obs.orders', {
      consumerGroup: 'shipping',
      partitions: 1,
      batch: 10,
      leaseSeconds: 1,
      wait: false,
    });
    expect(shipping.body.messages).toHaveLength(2);
    // billing on obs.audit: one partition acked, the other's lease left live
    const audit = await popQueue(api, 'obs.audit', {
      consumerGroup: 'billing',
      partitions: 10,
      batch: 100,
      wait: false,
    });
    expect(audit.body.messages).toHaveLength(6);
    await ackAll(api, {
      ...audit,
      body: {
        ...audit.body,
        messages: audit.body.messages.filter((m: any) => m.partitionId === audit.body.messages[0].partitionId),
      },
    });
    // shipping on obs.audit: autoAck, so delivered and acked at once
    const auto = await popQueue(api, 'obs.audit', {
      consumerGroup: 'shipping',
      partitions: 10,
      batch: 100,
      autoAck: true,
      wait: false,
    });
    expect(auto.body.messages).toHaveLength(6);
    // one partition of obs.orders paused for shipping: one it never claimed
    const [unclaimed] = await app.db.query<{ id: string }>(`
      select c.partition_id as id from queen.cursors c join queen.queues q on q.id = c.queue_id
      where q.name = 'obs.orders' and c.consumer_group = 'shipping' and c.lease_id is null order by c.partition_id limit 1`);
    expect(
      (
        await api.post(`/api/v1/cursors/${unclaimed.id}/shipping/pause`, {
          paused: true,
          reason: 'metrics test',
          until: null,
        })
      ).status,
    ).toBe(200);
    await sleep(1200); // shipping's lease on obs.orders expires, unreclaimed
  });
  afterAll(async () => {
    await server.stop();
    await app.db.drop();
  });

  async function scrape(url = server.url): Promise<Map<string, Family>> {
    const res = await fetch(`${url}/metrics/prometheus`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await res.text());
  }

  /** The figures of each (queue, group), counted from the tables themselves. */
  async function fromDatabase() {
    const rows = await app.db.query<Record<string, any>>(`
      select q.name as queue, g.consumer_group as "group",
             (select count(*) from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id)::int as pushed,
             (select sum(c.deliveries) from queen.cursors c where c.queue_id = q.id and c.consumer_group = g.consumer_group)::int as delivered,
             (select sum(c.committed_offset + cardinality(c.acked_offsets) - c.dead_letters) from queen.cursors c
              where c.queue_id = q.id and c.consumer_group = g.consumer_group)::int as acked,
             (select coalesce(sum(a.failures), 0) from queen.message_attempts a join queen.partitions p on p.id = a.partition_id
              where p.queue_id = q.id and a.consumer_group = g.consumer_group)::int as failed,
             (select count(*) from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
              where p.queue_id = q.id and d.consumer_group = g.consumer_group)::int as dead,
             (select count(*) from queen.messages m join queen.partitions p on p.id = m.partition_id
              join queen.cursors c on c.partition_id = p.id and c.consumer_group = g.consumer_group
              where p.queue_id = q.id and m."offset" > c.committed_offset)::int as lag,
             (select coalesce(extract(epoch from now() - min(s.created_at)), 0) from queen.messages m
              join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
              join queen.cursors c on c.partition_id = m.partition_id and c.consumer_group = g.consumer_group
              join queen.partitions p on p.id = m.partition_id
              where p.queue_id = q.id and m."offset" > c.committed_offset)::float as "lagSeconds",
             (select count(*) from queen.cursors c where c.queue_id = q.id and c.consumer_group = g.consumer_group
              and c.lease_id is not null and c.lease_expires_at > now())::int as live,
             (select count(*) from queen.cursors c where c.queue_id = q.id and c.consumer_group = g.consumer_group
              and c.lease_id is not null and c.lease_expires_at <= now())::int as expired,
             (select count(*) from queen.cursors c where c.queue_id = q.id and c.consumer_group = g.consumer_group and c.paused)::int as paused
      from queen.queue_groups g join queen.queues q on q.id = g.queue_id
      order by 1, 2`);
    return rows;
  }

  function scraped(families: Map<string, Family>, queue: string, group: string) {
    const l = { queue, consumer_group: group };
    return {
      queue,
      group,
      pushed: valueOf(families, 'queen_messages_pushed_total', { queue }),
      delivered: valueOf(families, 'queen_messages_delivered_total', l),
      acked: valueOf(families, 'queen_messages_acked_total', l),
      failed: valueOf(families, 'queen_messages_failed_total', l),
      dead: valueOf(families, 'queen_messages_dead_lettered_total', l),
      lag: valueOf(families, 'queen_consumer_lag_messages', l),
      lagSeconds: valueOf(families, 'queen_consumer_lag_seconds', l),
      live: valueOf(families, 'queen_leases', { ...l, state: 'live' }),
      expired: valueOf(families, 'queen_leases', { ...l, state: 'expired' }),
      paused: valueOf(families, 'queen_paused_cursors', l),
    };
  }

  const withoutSeconds = (r: Record<string, any>) => ({ ...r, lagSeconds: undefined });

  it('equals what the database says, for every queue and group of the workload', async () => {
    const families = await scrape();
    const database = await fromDatabase();
    expect(database.map((r) => [r.queue, r.group])).toEqual([...GROUPS].sort((a, b) => (a.join() < b.join() ? -1 : 1)));
    for (const row of database) {
      const s = scraped(families, row.queue, row.group);
      expect(withoutSeconds(s)).toEqual(withoutSeconds(row));
      expect(Math.abs(s.lagSeconds! - row.lagSeconds)).toBeLessThan(2);
    }
    // the workload, so that "equal" cannot mean "both empty"
    expect(scraped(families, 'obs.orders', 'billing')).toMatchObject({
      pushed: 6,
      delivered: 6,
      acked: 5,
      failed: 1,
      dead: 1,
      lag: 0,
      live: 0,
      expired: 0,
      paused: 0,
    });
    expect(scraped(families, 'obs.orders', 'shipping')).toMatchObject({
      delivered: 2,
      acked: 0,
      lag: 6,
      live: 0,
      expired: 1,
      paused: 1,
    });
    expect(scraped(families, 'obs.orders', 'shipping').lagSeconds).toBeGreaterThanOrEqual(1);
    expect(scraped(families, 'obs.audit', 'billing')).toMatchObject({
      pushed: 6,
      delivered: 6,
      acked: 3,
      lag: 3,
      live: 1,
      expired: 0,
    });
    expect(scraped(families, 'obs.audit', 'shipping')).toMatchObject({ delivered: 6, acked: 6, lag: 0, live: 0 });
  });

  it('declares each family with its type and base units, and labels with no ids', async () => {
    const families = await scrape();
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      queen_messages_pushed_total: 'counter',
      queen_messages_delivered_total: 'counter',
      queen_messages_acked_total: 'counter',
      queen_messages_failed_total: 'counter',
      queen_messages_dead_lettered_total: 'counter',
      queen_consumer_lag_messages: 'gauge',
      queen_consumer_lag_seconds: 'gauge',
      queen_leases: 'gauge',
      queen_paused_cursors: 'gauge',
      queen_http_request_duration_seconds: 'histogram',
      queen_db_pool_connections: 'gauge',
      queen_db_pool_idle_connections: 'gauge',
      queen_db_pool_waiting_requests: 'gauge',
      queen_parked_pops: 'gauge',
      queen_listener_connected: 'gauge',
      queen_figures_up: 'gauge',
    });
    expect(valueOf(families, 'queen_listener_connected')).toBe(1);
    expect(valueOf(families, 'queen_figures_up')).toBe(1);
    expect(valueOf(families, 'queen_db_pool_connections')).toBeGreaterThan(0);
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-/;
    for (const f of families.values()) {
      expect(f.name).toMatch(/^queen_/);
      for (const s of f.samples) for (const v of Object.values(s.labels)) expect(v).not.toMatch(uuid);
    }
  });

  it('counts parked long polls while they wait', async () => {
    const parked = popQueue(app.api, 'obs.idle', { consumerGroup: 'waiter', wait: true, timeout: 3000 });
    let seen = 0;
    for (let i = 0; i < 40 && seen === 0; i++) {
      await sleep(50);
      seen = valueOf(await scrape(), 'queen_parked_pops') ?? 0;
    }
    expect(seen).toBe(1);
    await pushMany(app.api, 'obs.idle', 'x', 1);
    expect((await parked).status).toBe(200);
    expect(valueOf(await scrape(), 'queen_parked_pops')).toBe(0);
  });

  it('GET /metrics says the same as JSON', async () => {
    const families = await scrape();
    const res = await app.api.get('/metrics');
    expect(res.status).toBe(200);
    const orders = res.body.queues.find((q: any) => q.queue === 'obs.orders');
    expect(orders.pushed).toBe(valueOf(families, 'queen_messages_pushed_total', { queue: 'obs.orders' }));
    const shipping = orders.consumerGroups.find((g: any) => g.consumerGroup === 'shipping');
    expect(shipping).toMatchObject({
      delivered: 2,
      acked: 0,
      failed: 0,
      deadLettered: 0,
      lagMessages: 6,
      leases: { live: 0, expired: 1 },
      pausedCursors: 1,
    });
    expect(res.body).toMatchObject({ figuresUp: true, listener: { connected: true }, parkedPops: 0 });
    expect(res.body.pool.total).toBeGreaterThan(0);
    expect(
      res.body.requests.find((r: any) => r.route === '/metrics/prometheus' && r.status === 200).count,
    ).toBeGreaterThan(0);
  });

  it('keeps the message counters across a restart of the instance (they come from the database)', async () => {
    const before = await scrape();
    await server.stop();
    server = await startServer(app.db.url);
    const after = await scrape();
    for (const [queue, group] of GROUPS)
      expect(withoutSeconds(scraped(after, queue, group))).toEqual(withoutSeconds(scraped(before, queue, group)));
    // the ended instance's counter rows were folded into one row per (queue, group)
    const leftovers = await app.db.query(`
      select 1 from queen.delivery_stats d
      where d.backend <> 0 and not exists (select 1 from pg_stat_activity a where a.pid = d.backend)`);
    expect(leftovers).toEqual([]);
  });

  it('puts every route in the request histogram under its pattern, never its path', async () => {
    const api = client(server.url);
    for (const key of Object.keys(ACCESS)) {
      const [method, pattern] = key.split(' ');
      const path = pattern.replace(/\[(\w+)\]/g, (_, name: string) => (/Id$/.test(name) ? randomUUID() : `zz-${name}`));
      const url = path.startsWith('/api/v1/pop') ? `${path}?wait=false` : path;
      if (pattern === '/api/v1/events') {
        const aborted = new AbortController();
        const res = await fetch(server.url + url, { signal: aborted.signal });
        expect(res.status).toBe(200);
        aborted.abort();
        continue;
      }
      await api.request(method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
    }
    const queueDetail = { route: '/api/v1/resources/queues/[queue]', method: 'GET', status: '200' };
    const detailsBefore = valueOf(await scrape(), 'queen_http_request_duration_seconds_count', queueDetail) ?? 0;
    await api.get('/api/v1/resources/queues/obs.orders');
    await api.get('/api/v1/resources/queues/obs.audit');
    const families = await scrape();
    const counts = families
      .get('queen_http_request_duration_seconds')!
      .samples.filter((s) => s.name === 'queen_http_request_duration_seconds_count');
    for (const key of Object.keys(ACCESS)) {
      const [method, pattern] = key.split(' ');
      expect(
        counts.some((s) => s.labels.route === pattern && s.labels.method === method),
        key,
      ).toBe(true);
    }
    const routes = new Set(counts.map((s) => s.labels.route));
    expect([...routes].filter((r) => !Object.keys(ACCESS).some((k) => k.endsWith(` ${r}`)))).toEqual([]);
    expect(valueOf(families, 'queen_http_request_duration_seconds_count', queueDetail)).toBe(detailsBefore + 2);
  });
});
