// The hot functions' statements are planned once per connection (force_generic_plan) on whatever
// the database was when the connection first ran them, and must stay index walks bounded by what
// a call returns when the database has grown to 100,000s of partitions around them. Read from the
// plans PostgreSQL actually ran (auto_explain of nested statements, with ANALYZE), not from a
// copy of the SQL.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';
import { type Explained, explainingClient, nodes, rowsRead } from './support/explain';

const QUEUE = 'plans.q';
const GROUP = 'g';
const GROWN = 100_000;
/** No statement of a call that returns ≤ 10 messages may read more rows than this from one node. */
const ROWS_BOUND = 500;

/**
 * Lease extensions go through a connection of their own: they are planned per call (ack.sql says
 * why), so their plans are not what this test reads. So do the set-up and the full ack's case.
 */
let plain: pg.Client;

async function push(client: pg.Client, partitions: string[]) {
  const items = partitions.map((p) => ({ queue: QUEUE, partition: p, payload: { p }, transactionId: randomUUID() }));
  await client.query('select * from queen.push($1::jsonb)', [JSON.stringify(items)]);
}

async function popAndAck(client: pg.Client, partition: string | null) {
  const lease = randomUUID();
  const { rows } = await client.query(
    `select * from queen.pop(p_queue => $1, p_partition => $2, p_group => $3, p_batch => 10, p_lease_id => $4::uuid, p_holder => 'h')`,
    [QUEUE, partition, GROUP, lease],
  );
  if (rows.length) await plain.query('select * from queen.extend_lease($1::uuid, 30)', [lease]);
  const items = rows.map((r) => ({
    transactionId: r.transaction_id,
    partitionId: r.partition_id,
    leaseId: lease,
    status: 'completed',
  }));
  if (items.length) await client.query('select * from queen.ack($1::jsonb, $2)', [JSON.stringify(items), GROUP]);
  return rows.length;
}

/** One round of the hot paths: pushes (one creating a partition, one of 40 items), pops on the queue and on a partition, extends, acks, an empty pop. */
async function hotPaths(client: pg.Client, round: number) {
  const parts = [`hot${round % 3}`, `hot${(round + 1) % 3}`, `new-${randomUUID()}`];
  await push(client, parts);
  // many items to a few partitions: planned once as well
  await push(
    client,
    Array.from({ length: 40 }, (_, i) => parts[i % 2]),
  );
  let got = 0;
  while ((await popAndAck(client, null)) > 0) got++;
  await push(client, [parts[0]]);
  got += await popAndAck(client, parts[0]);
  return got;
}

/** Ages the database around the hot queue: partitions in it drained by the group, held by another, and other queues. */
async function grow(db: TestDatabase) {
  await db.query(
    `with q as (select id from queen.queues where name = $1),
     p as (insert into queen.partitions (id, queue_id, name, head_offset, last_push_at)
           select queen.uuidv7(), q.id, 'old' || j, 1, now() - interval '30 days' from q, generate_series(1, $2::int) j
           returning id, queue_id),
     s as (insert into queen.segments (partition_id, first_offset, last_offset, created_at)
           select p.id, 1, 1, now() - interval '30 days' from p),
     m as (insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
           select p.id, 1, queen.uuidv7(), p.id::text, '{"old":1}', 1 from p),
     done as (insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset, deliveries)
              select p.id, $3, p.queue_id, 1, 1, 1 from p),
     held as (insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset, deliveries,
                                         lease_id, lease_end_offset, lease_acquired_at, lease_expires_at, lease_seconds, lease_holder)
              select p.id, 'slow', p.queue_id, 0, 1, 1, queen.uuidv7(), 1, now(), now() + interval '1 day', 86400, 'slow-worker' from p)
     insert into queen.backlog (partition_id, consumer_group, queue_id, last_claim_at, blocked_until, pending_since)
     select p.id, 'slow', p.queue_id, now(), now() + interval '1 day', now() - interval '30 days' from p`,
    [QUEUE, GROWN, GROUP],
  );
  await db.query(
    `with q as (insert into queen.queues (id, name, namespace, task)
                select queen.uuidv7(), 'plans.other' || i, 'other', 'q' || i from generate_series(1, 100) i returning id),
     p as (insert into queen.partitions (id, queue_id, name, head_offset, last_push_at)
           select queen.uuidv7(), q.id, 'p' || j, 1, now() from q, generate_series(1, $1::int / 100) j returning id, queue_id)
     insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset, deliveries)
     select p.id, $2, p.queue_id, 1, 1, 1 from p`,
    [GROWN, GROUP],
  );
  // and many groups on the other queues, and many queues never pushed to
  await db.query(
    `insert into queen.queue_groups (queue_id, consumer_group)
     select q.id, 'g' || j from queen.queues q, generate_series(1, 1000) j where q.name like 'plans.other%'`,
  );
  await db.query(
    `insert into queen.queues (id, name, namespace, task)
     select queen.uuidv7(), 'plans.empty' || i, 'empty', 'q' || i from generate_series(1, 20000) i`,
  );
}

/** Tables of a few rows by design (the app's instances), where a scan is the plan. */
const SMALL_BY_DESIGN = new Set(['instances']);

function expectIndexWalks(plans: Explained[]) {
  expect(plans.length).toBeGreaterThan(20);
  const found: string[] = [];
  for (const { text, plan } of plans) {
    for (const n of nodes(plan)) {
      const what = `${n['Node Type']}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`;
      const where = `${what} (${rowsRead(n)} rows) in: ${text.trim().replace(/\s+/g, ' ').slice(0, 200)}`;
      if (['Hash Join', 'Merge Join', 'Bitmap Heap Scan'].includes(n['Node Type'])) found.push(where);
      else if (n['Node Type'] === 'Seq Scan' && !SMALL_BY_DESIGN.has(n['Relation Name'] ?? '')) found.push(where);
      else if (rowsRead(n) > ROWS_BOUND) found.push(where);
    }
  }
  expect([...new Set(found)]).toEqual([]);
}

describe('plans of the hot paths', () => {
  let db: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingClient>>;
  let young: Explained[];
  beforeAll(async () => {
    db = await testDatabase();
    explaining = await explainingClient(db.url);
    plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    // the worst a young database can be: statistics of a few rows in every table the plans read
    await hotPaths(plain, 9);
    await db.query('analyze');
    // the connection's plans are made here, on a database of a few rows
    young = await explaining.capture(async () => {
      for (let round = 0; round < 3; round++) expect(await hotPaths(explaining.client, round)).toBeGreaterThan(0);
    });
  }, 120_000);
  afterAll(async () => {
    await explaining?.client.end();
    await plain?.end();
    await db?.drop();
  });

  it('are made once: a statement of the pop runs with parameters, not the call’s values', () => {
    const span = young.find((p) => /order by m\."offset" limit v_remaining/.test(p.text));
    expect(span, 'the pop span statement ran').toBeDefined();
    const conds = nodes(span!.plan)
      .map((n) => n['Index Cond'] ?? '')
      .join(' ');
    expect(conds).toMatch(/\$\d/);
  });

  it('call no SQL-language function that is planned again at each call (only inlined ones)', async () => {
    const c = explaining.client;
    await c.query(`set track_functions = 'all'`);
    await c.query('select pg_stat_reset()');
    await hotPaths(c, 7);
    await c.query('select pg_stat_force_next_flush()');
    const { rows } = await c.query(
      `select f.funcname from pg_stat_user_functions f join pg_proc p on p.oid = f.funcid join pg_language l on l.oid = p.prolang
       where f.schemaname = 'queen' and l.lanname = 'sql' and f.calls > 0 order by 1`,
    );
    await c.query(`set track_functions = 'none'`);
    expect(rows.map((r) => r.funcname)).toEqual([]);
  });

  it('a completed ack of one lease takes the short path; a failure, the full statement', async () => {
    const fullStatement = (plans: Explained[]) =>
      plans.some((p) => /failures as \(\s*insert into queen\.message_attempts/.test(p.text));
    await push(plain, ['short']);
    const lease = randomUUID();
    const { rows } = await explaining.client.query(
      `select * from queen.pop(p_queue => $1, p_partition => 'short', p_group => $2, p_batch => 10, p_lease_id => $3::uuid, p_holder => 'h')`,
      [QUEUE, GROUP, lease],
    );
    expect(rows).toHaveLength(1);
    const item = { transactionId: rows[0].transaction_id, partitionId: rows[0].partition_id, leaseId: lease };
    const failed = await explaining.capture(() =>
      explaining.client.query('select * from queen.ack($1::jsonb, $2)', [
        JSON.stringify([{ ...item, status: 'failed', error: 'x' }]),
        GROUP,
      ]),
    );
    expect(fullStatement(failed)).toBe(true);
    expect(fullStatement(young)).toBe(false); // hotPaths' acks: completed, one lease each
  });

  it('read each item of a large push a bounded number of times, duplicates too', async () => {
    const items = (n: number, partition: (i: number) => string, tx: string) =>
      JSON.stringify(
        Array.from({ length: n }, (_, i) => ({
          queue: 'plans.big',
          partition: partition(i),
          payload: { i },
          transactionId: `${tx}-${i}`,
        })),
      );
    const wide = items(500, (i) => `wide${i}`, 'wide');
    const deep = items(1000, () => 'deep', 'deep');
    await plain.query('select * from queen.push($1::jsonb)', [deep]);
    // 500 partitions new, then all of them again, then 1,000 items that are all stored already
    const plans = await explaining.capture(async () => {
      for (const call of [wide, wide, deep])
        await explaining.client.query('select * from queen.push($1::jsonb)', [call]);
    });
    const worst = plans
      .flatMap(({ text, plan }) => nodes(plan).map((n) => ({ rows: rowsRead(n), node: n['Node Type'], text })))
      .sort((a, b) => b.rows - a.rows)[0];
    expect(worst.rows, `${worst.node} in: ${worst.text.trim().slice(0, 200)}`).toBeLessThanOrEqual(2 * 1000);
  });

  it('read every step of the push: those the hot paths skip on a notified push whose new cursors start above 0', async () => {
    const pushTo = (client: pg.Client, partition: string) =>
      client.query('select * from queen.push($1::jsonb)', [
        JSON.stringify([{ queue: 'plans.seeded', partition, payload: {}, transactionId: randomUUID() }]),
      ]);
    await pushTo(plain, 'first');
    // a group subscribed from later: a new partition's cursor for it starts at the head, above 0
    await db.query(
      `with q as (select id from queen.queues where name = 'plans.seeded'),
       g as (insert into queen.queue_groups (queue_id, consumer_group) select id, 'later' from q)
       insert into queen.subscriptions (queue_id, consumer_group, mode, start_at)
       select id, 'later', 'new', now() + interval '1 hour' from q`,
    );
    // another instance alive: the push notifies
    await db.query(`insert into queen.instances (id) values ('plans-a'), ('plans-b')`);
    const skipped = await explaining.capture(() => pushTo(explaining.client, 'second'));
    await db.query(`delete from queen.instances where id like 'plans-%'`);
    expectIndexWalks(skipped);
    // a statement as PL/pgSQL ran it is part of its function's source, but for PERFORM (run as
    // SELECT) and the INTO clause (blanked)
    const squeeze = (sql: string) => sql.replace(/\s+/g, ' ').trim();
    const read = [...young, ...skipped].map((p) => squeeze(p.text).replace(/^SELECT /, 'perform '));
    const steps = await db.query<{ name: string; source: string }>(
      `select p.proname as name, p.prosrc as source from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'queen' and p.proname like 'push\\_%' order by 1`,
    );
    expect(steps.length).toBeGreaterThan(10);
    const unread = steps.filter((step) => {
      const source = squeeze(step.source).replace(/ into (v_\w+, )*v_\w+/g, '');
      return !read.some((text) => source.includes(text));
    });
    expect(unread.map((step) => step.name)).toEqual([]);
  });

  it('are index walks on a young database', () => {
    expectIndexWalks(young);
  });

  it(`stay index walks bounded by what a call returns at ${GROWN.toLocaleString('en')} partitions, before and after ANALYZE`, async () => {
    await grow(db);
    // the plans made young, still cached on this connection
    const grownYoungStats = await explaining.capture(async () => {
      for (let round = 0; round < 2; round++) expect(await hotPaths(explaining.client, round)).toBeGreaterThan(0);
    });
    expectIndexWalks(grownYoungStats);
    await db.query('analyze');
    const analyzed = await explaining.capture(async () => {
      for (let round = 0; round < 2; round++) expect(await hotPaths(explaining.client, round)).toBeGreaterThan(0);
    });
    expectIndexWalks(analyzed);
  }, 180_000);
});

// The steps of queen.push and queen.pop (sql/functions/push.sql, pop.sql) carry no settings of
// their own: they run under their caller's, which holds only while nothing else calls them.
const POP_STEPS = [
  'pop_queues',
  'pop_subscribe',
  'pop_unblocked',
  'pop_claimable_to',
  'pop_pass_gone',
  'pop_redelivered',
  'pop_lease',
];

/** Calls of `queen.<step>(` in lib/ and sql/functions/, outside the body of `queen.<caller>`. */
function callsOutside(caller: 'push' | 'pop', step: RegExp) {
  const root = path.join(__dirname, '..');
  const sources = [
    ...fs
      .readdirSync(path.join(root, 'lib'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|tsx|mjs)$/.test(f))
      .map((f) => path.join('lib', f)),
    ...fs
      .readdirSync(path.join(root, 'sql', 'functions'))
      .filter((f) => f.endsWith('.sql'))
      .map((f) => path.join('sql', 'functions', f)),
  ];
  expect(sources.length).toBeGreaterThan(50);
  const body = new RegExp(`create or replace function queen\\.${caller}\\(\\s*p_[\\s\\S]*?\\n\\$\\$;`);
  return sources.flatMap((file) => {
    const text = fs.readFileSync(path.join(root, file), 'utf8').replace(body, '');
    return [...text.matchAll(new RegExp(`(?<!function )queen\\.(${step.source})\\(`, 'g'))].map(
      (m) => `${file}: ${m[0]}`,
    );
  });
}

describe('the steps of the push and the pop', () => {
  it('are called by queen.push alone', () => {
    expect(callsOutside('push', /push_\w+/)).toEqual([]);
  });
  it('are called by queen.pop alone', () => {
    expect(callsOutside('pop', new RegExp(POP_STEPS.join('|')))).toEqual([]);
  });
});
