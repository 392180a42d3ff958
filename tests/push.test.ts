import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /api/v1/push', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  const offsets = async (queue: string, partition = 'Default') =>
    app.db.query<{ offset: string; transaction_id: string; payload: unknown }>(
      `select m."offset", m.transaction_id, m.payload from queen.messages m
       join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = $1 and p.name = $2 order by m."offset"`,
      [queue, partition],
    );

  it('answers 201 with one result per item, in input order, with every field', async () => {
    const res = await app.api.push([
      { queue: 'orders.created', partition: 'p1', payload: { n: 1 }, transactionId: 'a' },
      { queue: 'orders.created', partition: 'p2', payload: 'text', transactionId: 'b' },
      { queue: 'orders.created', payload: null },
      { queue: 'orders.created', partition: 'p1', transactionId: 'c', traceId: 'ignored', producerSub: 'x' },
    ]);
    expect(res.status).toBe(201);
    expect(res.body).toHaveLength(4);
    res.body.forEach((r: any, i: number) => {
      expect(Object.keys(r).sort()).toEqual([
        'index',
        'message_id',
        'partition_id',
        'queueName',
        'status',
        'trace_id',
        'transaction_id',
      ]);
      expect(r.index).toBe(i);
      expect(r.status).toBe('queued');
      expect(r.message_id).toMatch(UUID);
      expect(r.partition_id).toMatch(UUID);
      expect(r.trace_id).toBeNull();
      expect(r.queueName).toBe('orders.created');
    });
    expect(res.body.map((r: any) => r.transaction_id).slice(0, 2)).toEqual(['a', 'b']);
    expect(res.body[2].transaction_id).toMatch(UUID); // a fresh one when none is given
    expect(res.body[0].partition_id).toBe(res.body[3].partition_id);
    expect(res.body[0].partition_id).not.toBe(res.body[1].partition_id);

    const stored = await app.db.query<{
      transaction_id: string;
      payload: unknown;
      trace_id: string | null;
      producer_sub: string | null;
    }>(`select transaction_id, payload, trace_id, producer_sub from queen.messages order by transaction_id`);
    const byTx = Object.fromEntries(stored.map((s) => [s.transaction_id, s]));
    expect(byTx.a.payload).toEqual({ n: 1 });
    expect(byTx.b.payload).toBe('text');
    expect(byTx[res.body[2].transaction_id].payload).toBeNull();
    expect(byTx.c.payload).toEqual({}); // a missing payload is stored as {}
    expect(byTx.c.trace_id).toBeNull(); // /push ignores traceId
    expect(byTx.c.producer_sub).toBeNull();
  });

  it('assigns contiguous offsets from 1 in push order, per partition', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({
      queue: 'seq',
      partition: i % 2 ? 'odd' : 'even',
      payload: i,
      transactionId: `t${i}`,
    }));
    await app.api.push(items.slice(0, 25));
    await app.api.push(items.slice(25));
    for (const [partition, parity] of [
      ['even', 0],
      ['odd', 1],
    ] as const) {
      const rows = await offsets('seq', partition);
      expect(rows.map((r) => Number(r.offset))).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(rows.map((r) => r.payload)).toEqual(items.filter((_, i) => i % 2 === parity).map((it) => it.payload));
    }
    const [p] = await app.db.query<{ head_offset: string }>(
      "select head_offset from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'seq' and p.name = 'odd'",
    );
    expect(Number(p.head_offset)).toBe(25);
  });

  it('reports duplicates within a batch and against stored messages, with the stored id, and gives them no offset', async () => {
    const first = await app.api.push([{ queue: 'dups', transactionId: 'x', payload: 1 }]);
    const res = await app.api.push([
      { queue: 'dups', transactionId: 'y', payload: 2 },
      { queue: 'dups', transactionId: 'x', payload: 3 },
      { queue: 'dups', transactionId: 'y', payload: 4 },
      { queue: 'dups', transactionId: 'z', payload: 5 },
      { queue: 'dups', partition: 'other', transactionId: 'x', payload: 6 },
    ]);
    expect(res.body.map((r: any) => r.status)).toEqual(['queued', 'duplicate', 'duplicate', 'queued', 'queued']);
    expect(res.body[1].message_id).toBe(first.body[0].message_id);
    expect(res.body[2].message_id).toBe(res.body[0].message_id);
    const rows = await offsets('dups');
    expect(rows.map((r) => [Number(r.offset), r.transaction_id, r.payload])).toEqual([
      [1, 'x', 1],
      [2, 'y', 2],
      [3, 'z', 5],
    ]);
  });

  it('lets exactly one of 20 racing pushes of one transactionId be queued', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.api.push([{ queue: 'race', partition: 'p', transactionId: 'same', payload: i }]),
      ),
    );
    const statuses = results.map((r) => r.body[0].status);
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(19);
    const stored = await offsets('race', 'p');
    expect(stored).toHaveLength(1);
    expect(new Set(results.map((r) => r.body[0].message_id)).size).toBe(1);
  });

  it('coalesces concurrent pushes to one partition into one database call and one segment', async () => {
    await app.api.push([{ queue: 'coalesce', partition: 'p', payload: 0 }]);
    // Hold the partition's row lock so the next push's database call waits; the pushes that
    // arrive meanwhile must queue up behind it and go to the database together.
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query(
      "select 1 from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'coalesce' for update",
    );
    const blocked = app.api.push([{ queue: 'coalesce', partition: 'p', payload: 'first' }]);
    await new Promise((r) => setTimeout(r, 200));
    const racing = Array.from({ length: 20 }, (_, i) =>
      app.api.push([
        { queue: 'coalesce', partition: 'p', payload: `${i}a` },
        { queue: 'coalesce', partition: 'p', payload: `${i}b` },
      ]),
    );
    await new Promise((r) => setTimeout(r, 300));
    await locker.query('commit');
    await locker.end();
    const replies = await Promise.all([blocked, ...racing]);
    expect(replies.every((r) => r.status === 201)).toBe(true);

    const segments = await app.db.query<{ first_offset: string; last_offset: string }>(
      `select s.first_offset, s.last_offset from queen.segments s join queen.partitions p on p.id = s.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = 'coalesce' order by s.first_offset`,
    );
    expect(segments.map((s) => [Number(s.first_offset), Number(s.last_offset)])).toEqual([
      [1, 1],
      [2, 2],
      [3, 42],
    ]);
    // Each request's items stay contiguous and in its own order inside the shared segment.
    const rows = await offsets('coalesce', 'p');
    for (let i = 0; i < 20; i++) {
      const a = rows.findIndex((r) => r.payload === `${i}a`);
      expect(rows[a + 1].payload).toBe(`${i}b`);
    }
  });

  it('creates queues and partitions implicitly: namespace and task from the dotted name, lease 60', async () => {
    await app.api.push([
      { queue: 'billing.invoice.sent', partition: 'eu', payload: {} },
      { queue: 'plain', payload: {} },
    ]);
    const queue = await app.api.get('/api/v1/resources/queues/billing.invoice.sent');
    expect(queue.status).toBe(200);
    expect(queue.body).toMatchObject({
      name: 'billing.invoice.sent',
      namespace: 'billing',
      task: 'invoice',
      configured: false,
    });
    expect(queue.body.options.leaseTime).toBe(60);
    expect(queue.body.partitions.map((p: any) => p.name)).toEqual(['eu']);
    expect(queue.body.partitions[0].headOffset).toBe(1);
    const plain = await app.api.get('/api/v1/resources/queues/plain');
    expect(plain.body).toMatchObject({ namespace: 'plain', task: '' });
  });

  it('answers items: [] with 201 [] without touching the database', async () => {
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table queen.queues in access exclusive mode');
    try {
      const res = await app.api.push([]);
      expect(res.status).toBe(201);
      expect(res.text).toBe('[]');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
  });
});
