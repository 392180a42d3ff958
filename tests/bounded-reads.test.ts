// What a low role can ask for costs what its answer holds, not what the database holds (issue 29):
// the seek preview of a 20,000-partition queue, state reads and cycles of 1,000 keys on a shard of
// 200,000, the streams listing at 3,000 queries. Read from the plans PostgreSQL ran (rows read per
// node, as tests/plans.test.ts reads them) on statistics taken before the tables grew, and through
// the HTTP routes for what they answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { type Explained, explainingClient, nodes, rowsRead } from './support/explain';

let app: TestApp;
let explaining: Awaited<ReturnType<typeof explainingClient>>;
beforeAll(async () => {
  app = await startApp();
  explaining = await explainingClient(app.db.url);
  // statistics of an empty database, and no autovacuum to refresh them: the plans below must stay
  // bounded without fresh statistics
  await app.db.query('analyze');
  for (const table of ['queen.partitions', 'queen.cursors', 'queen_streams.state', 'queen_streams.queries'])
    await app.db.query(`alter table ${table} set (autovacuum_enabled = false)`);
}, 60_000);
afterAll(async () => {
  await explaining?.client.end();
  await app?.stop();
});

/** The nodes of the captured plans that read more rows than `bound`, named for the failure message. */
function over(plans: Explained[], bound: number): string[] {
  expect(plans.length).toBeGreaterThan(0);
  const found: string[] = [];
  for (const { text, plan } of plans)
    for (const n of nodes(plan))
      if (rowsRead(n) > bound)
        found.push(
          `${n['Node Type']}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''} (${rowsRead(n)} rows) in: ${text
            .trim()
            .replace(/\s+/g, ' ')
            .slice(0, 160)}`,
        );
  return [...new Set(found)];
}

describe('the seek preview of a queue of 20,000 partitions', () => {
  const PARTITIONS = 20_000;
  const QUEUE = 'bounded.seek';
  const preview = (group: string, qs: string) =>
    app.api.get(`/api/v1/consumer-groups/${group}/queues/${QUEUE}/seek/preview?${qs}`);

  beforeAll(async () => {
    // one message a partition (offsets 1 and 2); group g has a cursor on each at 1, group fresh none
    await app.db.query(
      `with q as (insert into queen.queues (id, name, namespace, task) values (queen.uuidv7(), $1, 'b', 't') returning id),
       p as (insert into queen.partitions (id, queue_id, name, head_offset, last_push_at)
             select queen.uuidv7(), q.id, 'p' || lpad(j::text, 5, '0'), 2, now() from q, generate_series(1, $2::int) j
             returning id, queue_id),
       s as (insert into queen.segments (partition_id, first_offset, last_offset, created_at)
             select p.id, 1, 2, now() - interval '1 hour' from p),
       m as (insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
             select p.id, o, queen.uuidv7(), p.id::text || '-' || o, '{}', 1 from p, generate_series(1, 2) o),
       g as (insert into queen.queue_groups (queue_id, consumer_group) select id, 'g' from q)
       insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset)
       select p.id, 'g', p.queue_id, 1 from p`,
      [QUEUE, PARTITIONS],
    );
  }, 60_000);

  it('reads a page of partitions, or one, never the queue', async () => {
    // one partition first: on a preview that reads the queue, it fails on its bound before the
    // whole queue's call logs 20,000 partitions' nested statements
    for (const group of ['g', 'fresh']) {
      const one = await explaining.capture(() =>
        explaining.client.query('select * from queen.seek_preview($1, $2, $3, true, null)', [group, QUEUE, 'p00007']),
      );
      expect(over(one, 10), group).toEqual([]);
    }
    // the whole queue: a page of it (1,000 partitions)
    for (const [group, toEnd, at] of [
      ['g', true, null],
      ['fresh', false, '2000-01-01T00:00:00Z'],
    ] as const) {
      const page = await explaining.capture(() =>
        explaining.client.query('select * from queen.seek_preview($1, $2, null, $3, $4)', [group, QUEUE, toEnd, at]),
      );
      expect(over(page, 1_001), group).toEqual([]);
    }
  }, 120_000);

  it('answers a page of partitions by name, and the `after` of the next one', async () => {
    const first = await preview('g', 'toEnd=true');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      partitions: 1000,
      partitionsMoved: 1000,
      skipped: 1000,
      replayed: 0,
      changesTruncated: true,
      next: 'p01000',
    });
    expect(first.body.changes).toHaveLength(100);
    expect(first.body.changes[0]).toMatchObject({ partition: 'p00001', committed: 1, target: 2, skipped: 1 });
    const second = await preview('g', `toEnd=true&after=${first.body.next}`);
    expect(second.body).toMatchObject({ partitions: 1000, next: 'p02000' });
    expect(second.body.changes[0].partition).toBe('p01001');
    const last = await preview('g', 'toEnd=true&after=p19500');
    expect(last.body).toMatchObject({ partitions: 500, next: null });
    const past = await preview('g', 'toEnd=true&after=p99999');
    expect(past.body).toMatchObject({ partitions: 0, next: null, changes: [] });
    // a group with no cursor yet counts from its seed (the low-water mark): both messages
    expect((await preview('fresh', 'toEnd=true&partition=p00007')).body).toMatchObject({
      partitions: 1,
      skipped: 2,
      next: null,
    });
    const both = await preview('g', 'toEnd=true&partition=p00007&after=p00001');
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/^after: /);
    expect((await app.api.get('/api/v1/consumer-groups/g/queues/nope/seek/preview?toEnd=true&after=p1')).status).toBe(
      404,
    );
  });
});

describe('stream state at 200,000 keys on a shard', () => {
  const QUERY = '01a2291d-98d7-78cc-b1bd-7f3819ba7b00';
  const KEYS = 200_000;
  let partition: string;
  // 1,000 stored keys, 1 in 17 (npm run bench reads and writes 10,000)
  const asked = Array.from({ length: 1_000 }, (_, i) => `k${i * 17 + 3}`);

  beforeAll(async () => {
    const [p] = await app.db.query<{ id: string }>(
      `with q as (insert into queen.queues (id, name, namespace, task) values (queen.uuidv7(), 'bounded.src', 'b', 't') returning id)
       insert into queen.partitions (id, queue_id, name) select queen.uuidv7(), q.id, 'p' from q returning id`,
    );
    partition = p.id;
    await app.db.query(
      `insert into queen_streams.queries (id, name, source_queue, config_hash) values ($1, 'bounded', 'bounded.src', 'h')`,
      [QUERY],
    );
    await app.db.query(
      `insert into queen_streams.state (query_id, partition_id, key, value)
       select $1, $2, 'k' || i, jsonb_build_object('n', i) from generate_series(1, $3::int) i`,
      [QUERY, partition, KEYS],
    );
    await app.db.query(
      `insert into queen_streams.shards (query_id, partition_id, state_keys, state_bytes)
       select $1, $2, count(*), sum(octet_length(key) + octet_length(value::text)) from queen_streams.state where query_id = $1`,
      [QUERY, partition],
    );
  }, 60_000);

  it('a state get of 1,000 keys probes the key index once a key', async () => {
    const plans = await explaining.capture(() =>
      explaining.client.query('select queen_streams.state_get($1, $2, $3::text[], null, null)', [
        QUERY,
        partition,
        asked,
      ]),
    );
    expect(over(plans, 2 * asked.length)).toEqual([]);
    const res = await app.api.post('/streams/v1/state/get', { query_id: QUERY, partition_id: partition, keys: asked });
    expect(res.status).toBe(200);
    const stored = asked.filter((k) => Number(k.slice(1)) <= KEYS);
    expect(res.body.rows.map((r: any) => r.key)).toEqual([...stored].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    // a prefix walks the keys that start with it
    const prefixed = await explaining.capture(() =>
      explaining.client.query(`select queen_streams.state_get($1, $2, null, 'k1999', null)`, [QUERY, partition]),
    );
    expect(over(prefixed, 200)).toEqual([]);
  });

  it('a cycle of 1,000 upserts and deletes probes the key index once a key', async () => {
    const ops = asked.map((key, i) =>
      i % 10 === 0 ? { type: 'delete', key } : { type: 'upsert', key, value: { n: -i } },
    );
    const plans = await explaining.capture(() =>
      explaining.client.query(
        `select queen_streams.cycle($1, $2, '__QUEUE_MODE__', $3::jsonb, '[]'::jsonb, null, true)`,
        [QUERY, partition, JSON.stringify(ops)],
      ),
    );
    expect(over(plans, 2 * asked.length)).toEqual([]);
    const [shard] = await app.db.query<{ keys: number; counted: number }>(
      `select s.state_keys::int as keys, (select count(*)::int from queen_streams.state t where t.query_id = $1) as counted
       from queen_streams.shards s where s.query_id = $1`,
      [QUERY],
    );
    expect(shard).toEqual({ keys: KEYS - 100, counted: KEYS - 100 });
  });
});

describe('the streams listing at 3,000 queries', () => {
  beforeAll(async () => {
    await app.db.query(
      `with q as (insert into queen_streams.queries (id, name, source_queue, config_hash)
                  select queen.uuidv7(), 'list-' || lpad(i::text, 4, '0'), 'list.src', 'h' from generate_series(1, 3000) i
                  returning id, name)
       insert into queen_streams.shards (query_id, partition_id, cycles, state_keys, state_bytes)
       select q.id, queen.uuidv7(), 1, j, 10 * j from q, generate_series(1, case when q.name = 'list-0001' then 150 else 3 end) j`,
    );
  }, 60_000);

  it('answers a page of queries (50 by default, at most 500), each with its first 100 shards', async () => {
    const res = await app.api.get('/api/dashboard/streams');
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(3000);
    expect(res.body.queries).toHaveLength(50);
    const first = res.body.queries.find((q: any) => q.name === 'list-0001');
    expect(first).toMatchObject({ shardCount: 150, statePartitions: 150, stateKeys: (150 * 151) / 2, cycles: 150 });
    expect(first.shards).toHaveLength(100);
    expect(first.shards[0]).toMatchObject({ stateKeys: 150, stateBytes: 1500 });
    expect(res.text.length).toBeLessThan(200_000);
    const names = (r: any) => r.body.queries.map((q: any) => q.name);
    const page2 = await app.api.get('/api/dashboard/streams?page=2&pageSize=10');
    const page1 = await app.api.get('/api/dashboard/streams?pageSize=20');
    expect(names(page2)).toEqual(names(page1).slice(10, 20));
    expect((await app.api.get('/api/dashboard/streams?pageSize=500')).body.queries).toHaveLength(500);
    for (const qs of ['pageSize=501', 'pageSize=0', 'page=0', 'page=x']) {
      const bad = await app.api.get(`/api/dashboard/streams?${qs}`);
      expect(bad.status, qs).toBe(400);
      expect(bad.body.error, qs).toMatch(/^(page|pageSize): /);
    }
  });
});
