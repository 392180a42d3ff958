// PostgreSQL failover under Patroni, under load (issue 33, item 1): a two-node cluster with
// synchronous replication behind HAProxy, the app connected through HAProxy, producers with
// transaction ids, consumers of two groups (one failing some batches), idle long polls, a streaming
// query on the same queue (per-key counters in its state, one sink message per source message, the
// ack in the same cycle) and the lifecycle job. A planned switchover, then a SIGKILL of the new primary's postmaster. Afterwards
// every push answered 201 is stored exactly once, every group received every message, no lease or
// cursor is stuck, the stream query counted every source message exactly once in its state and
// its sink, the counters equal a recount, the app recovered by itself, and every request
// in the gaps got an answer: a 5xx with Retry-After, never a hang.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../db/embedded.mjs';
import { report, until } from '../faults/support';
import { checkDelivery } from './support/checks';
import { startInstance, type Instance } from './support/instance';
import { Load, type Outcome } from './support/load';
import { startPatroni, type PatroniCluster } from './support/patroni';
import { keyOf, sinkTransactionId, StreamQuery } from './support/stream';
import { sleep } from './support/procs';

const DB = 'queen_ha';

describe('Patroni failover under load', () => {
  let cluster: PatroniCluster;
  let app: Instance;
  let db: pg.Pool;

  beforeAll(async () => {
    cluster = await startPatroni();
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${cluster.port}/postgres` });
    admin.on('error', () => {});
    await admin.connect();
    await admin.query(`create database ${DB}`);
    await admin.end();
    const url = `postgres://postgres@127.0.0.1:${cluster.port}/${DB}`;
    db = new pg.Pool({ connectionString: url, max: 2 });
    db.on('error', () => {}); // its connections die with each primary
    app = await startInstance('app', await freePort(), url, { RETENTION_INTERVAL_MS: '1000' });
  });
  afterAll(async () => {
    await app?.stop();
    await db?.end().catch(() => {});
    await cluster?.stop();
  });

  const query = async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
    // the checks' own connection rides the failover too: a query that meets a dead connection is asked again
    for (let attempt = 0; ; attempt++) {
      try {
        return (await db.query<R>(text, values)).rows;
      } catch (err) {
        if (attempt >= 20) throw err;
        await sleep(500);
      }
    }
  };

  /** From `from`, the gap in the answers: when the first refused request was sent, and when the last refusal came. */
  const gap = (load: Load, from: number, to: number) => {
    const refused = load.outcomes.filter(
      (o) => o.at >= from && o.at < to && o.status !== 200 && o.status !== 201 && o.status !== 204,
    );
    return {
      refused: refused.length,
      statuses: [...new Set(refused.map((o: Outcome) => `${o.kind} ${o.status}`))].join(', '),
      firstRefusedMs: refused.length ? Math.min(...refused.map((o) => o.at)) - from : undefined,
      lastRefusalMs: refused.length ? Math.max(...refused.map((o) => o.at + (o.ms ?? 0))) - from : undefined,
      slowestRefusalMs: refused.length ? Math.max(...refused.map((o) => o.ms ?? 0)) : undefined,
    };
  };

  it('loses no acknowledged push, delivers everything to every group, and recovers by itself', async () => {
    const load = new Load({
      base: app.url,
      queue: 'ha.orders',
      partitions: 8,
      groups: ['billing', 'audit'],
      consumersPerGroup: 2,
      failing: { audit: 5 },
      producers: 2,
      pushBatch: 5,
      pushPauseMs: 20,
      leaseSeconds: 5,
      pollTimeoutMs: 5_000,
      idle: { queue: 'ha.idle', polls: 20 },
      allow5xxWithRetryAfter: true,
    });
    const stream = new StreamQuery(load, {
      name: 'count',
      source: 'ha.orders',
      sink: 'ha.counted',
      workers: 2,
      batch: 10,
      leaseSeconds: 5,
      pollTimeoutMs: 5_000,
    });
    await stream.register();
    const pid = app.child().pid;
    load.start();
    stream.start();
    await sleep(3_000);

    // 1. a planned switchover
    const first = (await cluster.primary())!;
    const second = cluster.nodes.find((n) => n !== first)!;
    const switchAt = Date.now();
    const answer = await cluster.switchover(first, second);
    expect(answer.status, answer.text).toBe(200);
    await until(async () => (await cluster.primary())?.name === second.name, 60_000);
    await until(async () => load.count('push', (o) => o.status === 201 && o.at > Date.now() - 500) > 0, 60_000);
    await sleep(3_000);

    // 2. the new primary's postmaster killed
    await until(
      async () => (await cluster.members()).some((m) => m.name === first.name && m.role === 'sync_standby'),
      60_000,
    );
    const killAt = Date.now();
    cluster.killPostmaster(second);
    await until(async () => (await cluster.primary())?.name === first.name, 90_000);
    await until(async () => load.count('push', (o) => o.status === 201 && o.at > killAt) > 0, 60_000);
    const promotedMs = Date.now() - killAt;
    await sleep(3_000);

    load.stopProducing();
    const fedMs = await load.feedIdle();
    const drainedMs = await until(async () => {
      const [r] = await query<{ behind: number; cursors: number }>(
        `select count(*) filter (where c.committed_offset < p.head_offset)::int as behind, count(*)::int as cursors
           from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
          where q.name = 'ha.orders' and c.consumer_group in ('billing', 'audit', $1)`,
        [stream.group],
      );
      return r.cursors === 24 && r.behind === 0;
    }, 90_000);
    await load.stop();
    await stream.stop();

    const switchover = gap(load, switchAt, killAt);
    const failover = gap(load, killAt, Date.now());
    const duplicates = Object.fromEntries(
      load.o.groups.map((g) => {
        const seen = [...load.delivered.get(g)!.values()];
        return [g, seen.reduce((a, b) => a + b, 0) - seen.length];
      }),
    );
    report('failover', {
      requests: load.outcomes.length,
      answers: load.summary(),
      'accepted pushes (messages)': load.accepted.size,
      switchover: JSON.stringify(switchover),
      'failover (SIGKILL of the postmaster)': JSON.stringify(failover),
      'new primary named by Patroni and a push stored after the kill': `${promotedMs} ms`,
      'deliveries beyond the first': JSON.stringify(duplicates),
      'idle polls fed': `${load.idleGot.size} of 20 in ${fedMs} ms`,
      'drained after the load stopped': `${drainedMs} ms`,
      'stream cycles': JSON.stringify({
        committed: stream.cycles.committed,
        refused: Object.fromEntries(stream.cycles.refused),
        'sent again after a 5xx or no answer': stream.cycles.resent,
        'abandoned (lease left to expire)': stream.cycles.abandoned,
      }),
    });

    // every request answered, every refusal a 5xx with Retry-After, none hung
    expect(load.failures).toEqual([]);
    expect(new Set(load.idleGot.values()).size).toBe(20);
    await checkDelivery({ query }, load);

    // the stream query: every stored source message counted exactly once in its state (per key of
    // each partition's shard) and once in its sink, in order; its group's lease is gone (checkDelivery)
    expect(stream.cycles.committed).toBeGreaterThan(0);
    expect(stream.sinkDuplicates, 'no committed cycle pushed a sink message already there').toEqual([]);
    const source = await query<{ partition: string; tx: string; seq: number }>(
      `select p.name as partition, m.transaction_id as tx, (m.payload->>'seq')::int as seq from queen.messages m
         join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
        where q.name = 'ha.orders' order by p.name, m."offset"`,
    );
    const expected = new Map<string, number>();
    for (const m of source)
      expected.set(`${m.partition}/${keyOf(m.seq)}`, (expected.get(`${m.partition}/${keyOf(m.seq)}`) ?? 0) + 1);
    const state = await query<{ partition: string; key: string; n: number }>(
      `select p.name as partition, s.key, (s.value->>'n')::int as n from queen_streams.state s
         join queen.partitions p on p.id = s.partition_id where s.query_id = $1`,
      [stream.queryId],
    );
    expect(
      Object.fromEntries(state.map((r) => [`${r.partition}/${r.key}`, r.n]).sort()),
      'state: each source message counted once',
    ).toEqual(Object.fromEntries([...expected].sort()));
    const sink = await query<{ partition: string; tx: string; seq: number }>(
      `select p.name as partition, m.transaction_id as tx, (m.payload->>'seq')::int as seq from queen.messages m
         join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
        where q.name = 'ha.counted' order by p.name, m."offset"`,
    );
    expect(
      sink.map((m) => `${m.partition} ${m.tx} ${m.seq}`),
      'sink: one message per source message, in order',
    ).toEqual(source.map((m) => `${m.partition} ${sinkTransactionId(m.tx)} ${m.seq}`));

    // the same process, ready again, listening, and its lifecycle job running on the new primary
    expect(app.child().pid).toBe(pid);
    expect(app.child().exitCode).toBeNull();
    const ready = await fetch(`${app.url}/ready`);
    expect(ready.status, await ready.text()).toBe(200);
    expect((await (await fetch(`${app.url}/metrics`)).json()).listener.connected).toBe(true);
    await until(async () => {
      const [r] = await query<{ at: Date }>(`select updated_at as at from queen.system_state where key = 'lifecycle'`);
      return r !== undefined && r.at.getTime() > killAt;
    }, 30_000);

    // every counter equals a recount from the rows
    const [c] = await query<Record<string, string>>(
      `select (select f.stored from queen.queue_figures() f where f.queue_id = q.id)::text as "stored counted",
              (select count(*) from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id)::text as "stored actual",
              (select f.messages from queen.queue_figures() f where f.queue_id = q.id)::text as "pushed counted",
              (select coalesce(sum(p.head_offset), 0) from queen.partitions p where p.queue_id = q.id)::text as "pushed actual",
              (select coalesce(sum(s.committed), 0) from queen.group_stats s where s.queue_id = q.id)::text as "committed counted",
              (select coalesce(sum(c.committed_offset), 0) from queen.cursors c where c.queue_id = q.id)::text as "committed actual",
              (select coalesce(sum(n.n), 0) from queen.dead_letter_counts n join queen.partitions p on p.id = n.partition_id where p.queue_id = q.id)::text as "dead counted",
              (select count(*) from queen.dead_letters d join queen.partitions p on p.id = d.partition_id where p.queue_id = q.id)::text as "dead actual"
         from queen.queues q where q.name = 'ha.orders'`,
    );
    for (const what of ['stored', 'pushed', 'committed', 'dead'])
      expect(c[`${what} counted`], `${what}: counter = recount`).toBe(c[`${what} actual`]);
  });
});
