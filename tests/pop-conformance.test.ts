// The pop contract (../shared/spec/pop-routes.md), section by section. Test names quote the spec.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany, sleep } from './support/broker';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const configure = (
  queue: string,
  options: Record<string, unknown> = {},
  scope: { namespace?: string; task?: string } = {},
) => app.api.post('/api/v1/configure', { queue, ...scope, options });

describe('query parameters', () => {
  it('batch: defaults to 200', async () => {
    await pushMany(app.api, 'qp.batch', 'p', 250);
    const r = await popQueue(app.api, 'qp.batch');
    expect(r.status).toBe(200);
    expect(r.body.messages).toHaveLength(200);
  });

  it('batch: is the total message budget for the call, shared across every partition, consumed partition by partition', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'qp.budget', p, 5);
    const r = await popQueue(app.api, 'qp.budget', { batch: 7, partitions: 0 });
    expect(r.body.messages).toHaveLength(7);
    expect(r.body.partitionsClaimed).toBe(2);
    const perPartition = Object.values(
      r.body.messages.reduce(
        (acc: Record<string, number>, m: any) => ({ ...acc, [m.partition]: (acc[m.partition] ?? 0) + 1 }),
        {},
      ),
    );
    expect(perPartition).toEqual([5, 2]);
  });

  it('partitions: defaults to 1', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'qp.partitions1', p, 2);
    const r = await popQueue(app.api, 'qp.partitions1', { batch: 100 });
    expect(r.body.partitionsClaimed).toBe(1);
    expect(new Set(r.body.messages.map((m: any) => m.partitionId)).size).toBe(1);
  });

  it('partitions: caps how many partitions one call may claim', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'qp.partitions2', p, 2);
    const r = await popQueue(app.api, 'qp.partitions2', { batch: 100, partitions: 2 });
    expect(r.body.partitionsClaimed).toBe(2);
    expect(r.body.messages).toHaveLength(4);
  });

  it('partitions: 0 or a negative value means no cap', async () => {
    for (const queue of ['qp.nocap0', 'qp.nocapneg'])
      for (const p of ['a', 'b', 'c', 'd']) await pushMany(app.api, queue, p, 1);
    expect((await popQueue(app.api, 'qp.nocap0', { partitions: 0 })).body.partitionsClaimed).toBe(4);
    expect((await popQueue(app.api, 'qp.nocapneg', { partitions: -3 })).body.partitionsClaimed).toBe(4);
  });

  it('partitions: is ignored by the single-partition route, which claims one', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'qp.single', p, 3);
    const r = await pop(app.api, '/queue/qp.single/partition/b', { partitions: 5, batch: 100 });
    expect(r.body.partitionsClaimed).toBe(1);
    expect(r.body.messages.map((m: any) => m.partition)).toEqual(['b', 'b', 'b']);
    expect(r.body.partition).toBe('b');
  });

  it('autoAck: defaults to false (a lease is taken)', async () => {
    await pushMany(app.api, 'qp.autoack0', 'p', 2);
    const r = await popQueue(app.api, 'qp.autoack0');
    expect(r.body.leaseId).toMatch(UUID_V7);
    expect(r.body.messages.every((m: any) => m.leaseId === r.body.leaseId)).toBe(true);
  });

  it('autoAck=true: the cursor is committed inside the pop, and leaseId is empty', async () => {
    await pushMany(app.api, 'qp.autoack1', 'p', 4);
    const first = await popQueue(app.api, 'qp.autoack1', { autoAck: true, batch: 2 });
    expect(first.body.leaseId).toBe('');
    expect(first.body.messages.map((m: any) => m.leaseId)).toEqual(['', '']);
    const second = await popQueue(app.api, 'qp.autoack1', { autoAck: true, batch: 2 });
    expect(second.body.messages.map((m: any) => m.data.seq)).toEqual([2, 3]);
    expect((await app.api.get('/api/v1/leases?queue=qp.autoack1')).body.leases).toEqual([]);
    const detail = await app.api.get('/api/v1/consumer-groups/__QUEUE_MODE__');
    const partition = detail.body.queues.find((q: any) => q.queueName === 'qp.autoack1').partitions[0];
    expect(partition).toMatchObject({ committedOffset: 4, headOffset: 4, lag: 0, lease: null });
  });

  it('wait: defaults to false, a single attempt that answers 204 at once', async () => {
    const r = await popQueue(app.api, 'qp.nowait', { timeout: 120_000 });
    expect(r.status).toBe(204);
  }, 30_000); // a wait for the 120 s timeout would outlast the test

  it("leaseSeconds: defaults to the queue's leaseTime, 60 for a queue created implicitly by a push", async () => {
    await pushMany(app.api, 'qp.lease.implicit', 'p', 1);
    await popQueue(app.api, 'qp.lease.implicit');
    const [lease] = (await app.api.get('/api/v1/leases?queue=qp.lease.implicit')).body.leases;
    expect(lease.expiresInSeconds).toBeGreaterThan(55);
    expect(lease.expiresInSeconds).toBeLessThanOrEqual(60);
  });

  it('leaseSeconds: 300 for a queue created through /api/v1/configure', async () => {
    await configure('qp.lease.configured');
    await pushMany(app.api, 'qp.lease.configured', 'p', 1);
    await popQueue(app.api, 'qp.lease.configured');
    const [lease] = (await app.api.get('/api/v1/leases?queue=qp.lease.configured')).body.leases;
    expect(lease.expiresInSeconds).toBeGreaterThan(295);
    expect(lease.expiresInSeconds).toBeLessThanOrEqual(300);
  });

  it("leaseSeconds: overrides the queue's lease for this call only; 0 or less is treated as absent", async () => {
    await configure('qp.lease.override', { leaseTime: 200 });
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'qp.lease.override', p, 1);
    await pop(app.api, '/queue/qp.lease.override/partition/a', { leaseSeconds: 20 });
    await pop(app.api, '/queue/qp.lease.override/partition/b', { leaseSeconds: 0 });
    await pop(app.api, '/queue/qp.lease.override/partition/c', { leaseSeconds: -4 });
    const leases = (await app.api.get('/api/v1/leases?queue=qp.lease.override')).body.leases;
    const by = Object.fromEntries(leases.map((l: any) => [l.partition, l.expiresInSeconds]));
    expect(by.a).toBeGreaterThan(15);
    expect(by.a).toBeLessThanOrEqual(20);
    for (const p of ['b', 'c']) {
      expect(by[p]).toBeGreaterThan(195);
      expect(by[p]).toBeLessThanOrEqual(200);
    }
  });

  it('consumerGroup: omitted means queue mode, __QUEUE_MODE__, an ordinary group whose cursor two consumers share', async () => {
    await pushMany(app.api, 'qp.queuemode', 'p', 4);
    const a = await popQueue(app.api, 'qp.queuemode', { batch: 2 });
    expect(a.body.consumerGroup).toBe('__QUEUE_MODE__');
    expect(a.body.messages[0].consumerGroup).toBe('__QUEUE_MODE__');
    expect((await popQueue(app.api, 'qp.queuemode', { batch: 2 })).status).toBe(204); // leased by the first
    await ackAll(app.api, a);
    const b = await popQueue(app.api, 'qp.queuemode', { batch: 2 });
    expect(b.body.messages.map((m: any) => m.data.seq)).toEqual([2, 3]);
    // A named group has a cursor of its own and starts at the oldest message.
    const g = await popQueue(app.api, 'qp.queuemode', { batch: 10, consumerGroup: 'other' });
    expect(g.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1, 2, 3]);
  });

  it('subscriptionMode=new: skips the existing backlog of a cursor that does not exist yet', async () => {
    await pushMany(app.api, 'qp.sub.new', 'p', 3);
    expect((await popQueue(app.api, 'qp.sub.new', { consumerGroup: 'fresh', subscriptionMode: 'new' })).status).toBe(
      204,
    );
    await pushMany(app.api, 'qp.sub.new', 'p', 2, 'p', 3);
    const r = await popQueue(app.api, 'qp.sub.new', { consumerGroup: 'fresh', subscriptionMode: 'new' });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([3, 4]);
  });

  it('subscriptionMode=all (the default): starts at the oldest retained message', async () => {
    await pushMany(app.api, 'qp.sub.all', 'p', 3);
    const r = await popQueue(app.api, 'qp.sub.all', { consumerGroup: 'everything', subscriptionMode: 'all' });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1, 2]);
  });

  it('subscriptionMode and subscriptionFrom are ignored for a (partition, group) that has already been contacted', async () => {
    await pushMany(app.api, 'qp.sub.contacted', 'p', 2);
    const first = await popQueue(app.api, 'qp.sub.contacted', { consumerGroup: 'g', batch: 1 });
    await ackAll(app.api, first);
    const again = await popQueue(app.api, 'qp.sub.contacted', {
      consumerGroup: 'g',
      subscriptionMode: 'new',
      subscriptionFrom: 'now',
    });
    expect(again.body.messages.map((m: any) => m.data.seq)).toEqual([1]);
  });

  it('subscriptionFrom=now: starts after everything already there', async () => {
    await pushMany(app.api, 'qp.from.now', 'p', 2);
    expect((await popQueue(app.api, 'qp.from.now', { consumerGroup: 'g', subscriptionFrom: 'now' })).status).toBe(204);
    await pushMany(app.api, 'qp.from.now', 'p', 1, 'p', 2);
    expect(
      (await popQueue(app.api, 'qp.from.now', { consumerGroup: 'g' })).body.messages.map((m: any) => m.data.seq),
    ).toEqual([2]);
  });

  it('subscriptionFrom=<ISO-8601>: starts at the first segment created at or after it', async () => {
    await pushMany(app.api, 'qp.from.iso', 'p', 2);
    await sleep(50);
    const cut = new Date().toISOString();
    await sleep(50);
    await pushMany(app.api, 'qp.from.iso', 'p', 2, 'p', 2);
    const r = await popQueue(app.api, 'qp.from.iso', { consumerGroup: 'g', subscriptionFrom: cut });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([2, 3]);
  });

  it('subscriptionFrom: an unparseable timestamp is ignored', async () => {
    await pushMany(app.api, 'qp.from.bad', 'p', 2);
    const r = await popQueue(app.api, 'qp.from.bad', { consumerGroup: 'g', subscriptionFrom: 'yesterday-ish' });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1]);
  });

  it('queue mode is deliberately excluded from seeding: it never skips backlog', async () => {
    await pushMany(app.api, 'qp.qm.noseed', 'p', 2);
    const r = await popQueue(app.api, 'qp.qm.noseed', { subscriptionMode: 'new', subscriptionFrom: 'now' });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1]);
    expect(
      await app.db.query(
        "select 1 from queen.subscriptions s join queen.queues q on q.id = s.queue_id where q.name = 'qp.qm.noseed'",
      ),
    ).toEqual([]);
  });

  it('a durable subscription record wins over the pop-carried intent', async () => {
    await pushMany(app.api, 'qp.durable', 'p', 2);
    // The group subscribed "from the beginning" before it ever popped.
    const sub = await app.api.post('/api/v1/consumer-groups/durable/subscription', {
      queue: 'qp.durable',
      subscriptionMode: 'all',
    });
    expect(sub.status).toBe(200);
    const r = await popQueue(app.api, 'qp.durable', { consumerGroup: 'durable', subscriptionMode: 'new' });
    expect(r.body.messages.map((m: any) => m.data.seq)).toEqual([0, 1]);
  });

  it('a group may subscribe before the first push: its record hangs off the queue the pop created', async () => {
    expect((await popQueue(app.api, 'qp.early', { consumerGroup: 'early', subscriptionMode: 'new' })).status).toBe(204);
    await pushMany(app.api, 'qp.early', 'p', 2);
    expect((await popQueue(app.api, 'qp.early', { consumerGroup: 'early' })).body.messages).toHaveLength(2);
  });

  it('namespace and task: the discovery route pops across every queue matching them', async () => {
    await configure('disc.one', {}, { namespace: 'disc', task: 'alpha' });
    await configure('disc.two', {}, { namespace: 'disc', task: 'beta' });
    await configure('other.three', {}, { namespace: 'other', task: 'alpha' });
    await pushMany(app.api, 'disc.one', 'p', 1, 'one');
    await pushMany(app.api, 'disc.two', 'p', 1, 'two');
    await pushMany(app.api, 'other.three', 'p', 1, 'three');
    const byNamespace = await pop(app.api, '', { namespace: 'disc', partitions: 0, consumerGroup: 'd1' });
    expect(byNamespace.body.queue).toBe('');
    expect(byNamespace.body.messages.map((m: any) => m.transactionId).sort()).toEqual(['one-0', 'two-0']);
    const byTask = await pop(app.api, '', { task: 'alpha', partitions: 0, consumerGroup: 'd2' });
    expect(byTask.body.messages.map((m: any) => m.transactionId).sort()).toEqual(['one-0', 'three-0']);
    const byBoth = await pop(app.api, '', { namespace: 'disc', task: 'beta', partitions: 0, consumerGroup: 'd3' });
    expect(byBoth.body.messages.map((m: any) => m.transactionId)).toEqual(['two-0']);
  });

  it('discovery with neither namespace nor task: 400 with the exact body, no scan', async () => {
    const r = await pop(app.api, '', { consumerGroup: 'x' });
    expect(r.status).toBe(400);
    expect(r.text).toBe('{"success":false,"error":"namespace or task is required","messages":[]}');
  });

  it('a query parameter that fails to deserialize is a 400 naming it', async () => {
    for (const [param, value] of [
      ['batch', 'ten'],
      ['batch', '0'],
      ['partitions', '1.5'],
      ['autoAck', 'yes'],
      ['wait', 'maybe'],
      ['timeout', '-1'],
      ['leaseSeconds', 'x'],
    ]) {
      const r = await popQueue(app.api, 'qp.badparam', { [param]: value });
      expect(r.status, `${param}=${value}`).toBe(400);
      expect(r.body.error).toMatch(new RegExp(`^${param}: `));
    }
  });

  it('a queue-scoped pop on a queue that does not exist creates its queen.queues row, then answers 204', async () => {
    const r = await popQueue(app.api, 'typo.queue.name');
    expect(r.status).toBe(204);
    const q = await app.api.get('/api/v1/resources/queues/typo.queue.name');
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ namespace: 'typo', task: 'queue', configured: false, partitions: [] });
    expect(q.body.options.leaseTime).toBe(60);
  });
});

describe('response', () => {
  it('200: top-level fields, exactly', async () => {
    await pushMany(app.api, 'resp.top', 'customer-42', 2);
    const r = await popQueue(app.api, 'resp.top', { consumerGroup: 'billing' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual([
      'success',
      'queue',
      'partition',
      'partitionId',
      'leaseId',
      'consumerGroup',
      'messages',
      'partitionsClaimed',
    ]);
    expect(r.body).toMatchObject({
      success: true,
      queue: 'resp.top',
      partition: 'customer-42',
      consumerGroup: 'billing',
      partitionsClaimed: 1,
    });
    expect(r.body.partitionId).toMatch(UUID_V7);
    expect(r.body.leaseId).toMatch(UUID_V7);
  });

  it('per-message fields, exactly: no offset, attempt count, expiry, queue name, headers or status', async () => {
    await app.api.push([
      {
        queue: 'resp.msg',
        partition: 'p',
        payload: { orderId: 8891, total: 4200 },
        transactionId: 'order-8891-created',
      },
    ]);
    const r = await popQueue(app.api, 'resp.msg', { consumerGroup: 'billing' });
    const [m] = r.body.messages;
    expect(Object.keys(m)).toEqual([
      'id',
      'transactionId',
      'traceId',
      'data',
      'producerSub',
      'createdAt',
      'partitionId',
      'partition',
      'leaseId',
      'consumerGroup',
    ]);
    expect(m).toMatchObject({
      transactionId: 'order-8891-created',
      traceId: null,
      data: { orderId: 8891, total: 4200 },
      producerSub: null,
      partitionId: r.body.partitionId,
      partition: 'p',
      leaseId: r.body.leaseId,
      consumerGroup: 'billing',
    });
    expect(m.id).toMatch(UUID_V7);
    expect(m.createdAt).toMatch(WIRE_TIME);
  });

  it('data: any JSON value, spliced back verbatim', async () => {
    const payloads = [
      { nested: { a: [1, 'two', null, true] } },
      'a string',
      42.5,
      null,
      [1, 2, 3],
      { unicode: 'żółć ✓ \u2028' },
      {},
    ];
    await app.api.push(payloads.map((payload) => ({ queue: 'resp.data', payload })));
    const r = await popQueue(app.api, 'resp.data');
    expect(r.body.messages.map((m: any) => m.data)).toEqual(payloads);
  });

  it('traceId: null unless the message was written by a transaction that supplied one', async () => {
    await app.api.push([{ queue: 'resp.trace', partition: 'p', payload: 1, traceId: 'ignored-by-push' }]);
    const tx = await app.api.post('/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'resp.trace', partition: 'p', payload: 2, traceId: 'trace-123' }] },
      ],
    });
    expect(tx.body.success).toBe(true);
    const r = await popQueue(app.api, 'resp.trace');
    expect(r.body.messages.map((m: any) => m.traceId)).toEqual([null, 'trace-123']);
  });

  it("createdAt: the segment's timestamp, identical for messages coalesced into one segment, UTC with microseconds and Z", async () => {
    await app.api.push([
      { queue: 'resp.created', partition: 'p', payload: 1 },
      { queue: 'resp.created', partition: 'p', payload: 2 },
    ]);
    await sleep(20);
    await app.api.push([{ queue: 'resp.created', partition: 'p', payload: 3 }]);
    const r = await popQueue(app.api, 'resp.created');
    const [a, b, c] = r.body.messages.map((m: any) => m.createdAt);
    expect(a).toBe(b);
    expect(c > a).toBe(true);
    const [segment] = await app.db.query<{ utc: string }>(
      `select to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as utc
       from queen.segments s join queen.partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'resp.created' order by s.first_offset limit 1`,
    );
    expect(a).toBe(segment.utc);
  });

  it("createdAt: correct UTC even when the database's timezone is not UTC", async () => {
    await app.db.query(`alter database "${app.db.name}" set timezone = 'Pacific/Kiritimati'`);
    try {
      await app.api.push([{ queue: 'resp.tz', payload: 1 }]);
      const before = Date.now();
      const r = await popQueue(app.api, 'resp.tz');
      const stamp = Date.parse(r.body.messages[0].createdAt);
      expect(Math.abs(stamp - before)).toBeLessThan(10_000); // Kiritimati is UTC+14: a mislabelled value would be 14 h off
    } finally {
      await app.db.query(`alter database "${app.db.name}" reset timezone`);
    }
  });

  it('messages: in offset order within each partition', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'resp.order', p, 30);
    const r = await popQueue(app.api, 'resp.order', { partitions: 0, batch: 60 });
    for (const p of ['a', 'b']) {
      const seqs = r.body.messages.filter((m: any) => m.partition === p).map((m: any) => m.data.seq);
      expect(seqs).toEqual([...Array(30).keys()]);
    }
  });

  it('partition and partitionId describe only the first claimed partition; each message carries its own', async () => {
    for (const p of ['x', 'y']) await pushMany(app.api, 'resp.first', p, 2);
    const r = await popQueue(app.api, 'resp.first', { partitions: 0 });
    expect(r.body.partitionsClaimed).toBe(2);
    expect(r.body.partitionId).toBe(r.body.messages[0].partitionId);
    expect(r.body.partition).toBe(r.body.messages[0].partition);
    expect(new Set(r.body.messages.map((m: any) => m.partitionId)).size).toBe(2);
    // One lease id covers every message of the call, across partitions.
    expect(new Set(r.body.messages.map((m: any) => m.leaseId))).toEqual(new Set([r.body.leaseId]));
  });

  it('an empty pop is a 204 with no body at all (nothing available)', async () => {
    const r = await popQueue(app.api, 'resp.empty');
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.empty).toBe('idle');
  });

  it('pop maintenance on: the bare 204, whatever is available; off: pops deliver again', async () => {
    await pushMany(app.api, 'resp.maint', 'p', 1);
    const on = await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'conformance test' });
    expect(on.body).toEqual({ popMaintenanceMode: true });
    try {
      expect((await app.api.get('/api/v1/system/maintenance/pop')).body).toEqual({ popMaintenanceMode: true });
      const r = await popQueue(app.api, 'resp.maint', { wait: true, timeout: 3000 });
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(r.empty).toBe('maintenance');
    } finally {
      expect((await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'done' })).body).toEqual({
        popMaintenanceMode: false,
      });
    }
    expect((await popQueue(app.api, 'resp.maint')).status).toBe(200);
    const audit = await app.db.query<{ action: string; reason: string }>(
      "select action, reason from queen.audit_log where target = 'pop_maintenance' order by id",
    );
    expect(audit.slice(-2)).toEqual([
      { action: 'maintenance.on', reason: 'conformance test' },
      { action: 'maintenance.off', reason: 'done' },
    ]);
  });

  it('a stored-procedure error: the same bare 204, the error text kept out of the body', async () => {
    await pushMany(app.api, 'resp.sperror', 'p', 1);
    const admin = new pg.Client({ connectionString: app.db.url });
    await admin.connect();
    await admin.query(
      `create function queen.test_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`,
    );
    await admin.query(
      'create trigger test_fail before insert on queen.cursors for each row execute function queen.test_fail()',
    );
    try {
      const r = await popQueue(app.api, 'resp.sperror');
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(r.empty).toBe('error');
    } finally {
      await admin.query('drop trigger test_fail on queen.cursors');
      await admin.query('drop function queen.test_fail()');
      await admin.end();
    }
    expect((await popQueue(app.api, 'resp.sperror')).status).toBe(200);
  });
});

describe('leases and concurrency', () => {
  it('exactly one live leased batch exists per (partition, group)', async () => {
    await pushMany(app.api, 'lc.one', 'p', 10);
    const a = await popQueue(app.api, 'lc.one', { consumerGroup: 'g', batch: 3 });
    expect(a.status).toBe(200);
    expect((await popQueue(app.api, 'lc.one', { consumerGroup: 'g', batch: 3 })).status).toBe(204);
    expect((await pop(app.api, '/queue/lc.one/partition/p', { consumerGroup: 'g' })).status).toBe(204);
    // another group is not affected
    expect((await popQueue(app.api, 'lc.one', { consumerGroup: 'h', batch: 3 })).status).toBe(200);
  });

  it('other workers skip a leased partition and look elsewhere', async () => {
    for (const p of ['a', 'b']) await pushMany(app.api, 'lc.skip', p, 2);
    const first = await popQueue(app.api, 'lc.skip');
    const second = await popQueue(app.api, 'lc.skip');
    expect(second.status).toBe(200);
    expect(second.body.partition).not.toBe(first.body.partition);
  });

  it('a lease that expires without an ack: the batch redelivers; expiry never consumes retry budget', async () => {
    await configure('lc.expiry', { retryLimit: 0 });
    await pushMany(app.api, 'lc.expiry', 'p', 2);
    const first = await popQueue(app.api, 'lc.expiry', { consumerGroup: 'g', leaseSeconds: 1 });
    await sleep(1300);
    const expired = (await app.api.get('/api/v1/leases?queue=lc.expiry&state=expired')).body.leases;
    expect(expired.map((l: any) => l.leaseId)).toEqual([first.body.leaseId]); // expired, not yet reclaimed
    const again = await popQueue(app.api, 'lc.expiry', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.id)).toEqual(first.body.messages.map((m: any) => m.id));
    expect(again.body.leaseId).not.toBe(first.body.leaseId);
    const [cursor] = await app.db.query<{ lease_expiries: string; failures: string; redeliveries: string }>(
      "select lease_expiries, failures, redeliveries from queen.cursors where consumer_group = 'g' and partition_id = $1",
      [first.body.partitionId],
    );
    expect(cursor).toEqual({ lease_expiries: '1', failures: '0', redeliveries: '2' });
    const message = await app.api.get(
      `/api/v1/messages/${first.body.partitionId}/${first.body.messages[0].transactionId}`,
    );
    expect(message.body.consumerGroups).toEqual([
      expect.objectContaining({ name: 'g', state: 'leased', deliveries: 2, failures: 0 }),
    ]);
    // retryLimit is 0, yet nothing went to the dead letters: expiry is not a failure
    expect((await app.api.get('/api/v1/dlq?queue=lc.expiry')).body.pagination.total).toBe(0);
    // the old holder's ack is refused (fenced by its lease id)
    const late = await app.api.post('/api/v1/ack', {
      transactionId: first.body.messages[0].transactionId,
      partitionId: first.body.partitionId,
      consumerGroup: 'g',
      leaseId: first.body.leaseId,
    });
    expect(late.body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
  });

  it('partition choice is fair: with many backlogged partitions and partitions=1 none waits behind the others', async () => {
    const names = ['p0', 'p1', 'p2', 'p3', 'p4'];
    for (const p of names) await pushMany(app.api, 'lc.fair', p, 20);
    const served: string[] = [];
    for (let i = 0; i < 15; i++) {
      const r = await popQueue(app.api, 'lc.fair', { batch: 1, autoAck: true });
      served.push(r.body.partition);
    }
    const counts = names.map((n) => served.filter((s) => s === n).length);
    expect(counts).toEqual([3, 3, 3, 3, 3]);
  });
});

describe('visibility delays', () => {
  it('delayedProcessing: only segments at least that many seconds old are delivered', async () => {
    await configure('vis.delayed', { delayedProcessing: 1 });
    await pushMany(app.api, 'vis.delayed', 'p', 2);
    expect((await popQueue(app.api, 'vis.delayed')).status).toBe(204);
    await sleep(1200);
    expect((await popQueue(app.api, 'vis.delayed')).body.messages).toHaveLength(2);
  });

  it('windowBuffer: a partition that received anything within that many seconds delivers nothing', async () => {
    await configure('vis.window', { windowBuffer: 1 });
    await pushMany(app.api, 'vis.window', 'p', 1);
    await sleep(600);
    await pushMany(app.api, 'vis.window', 'p', 1, 'p', 1); // resets the window
    await sleep(600);
    expect((await popQueue(app.api, 'vis.window')).status).toBe(204);
    await sleep(600);
    expect((await popQueue(app.api, 'vis.window')).body.messages).toHaveLength(2);
  });

  it('both apply to every pop route', async () => {
    await configure('vis.routes', { delayedProcessing: 60 }, { namespace: 'visroutes', task: 't' });
    await pushMany(app.api, 'vis.routes', 'p', 1);
    expect((await popQueue(app.api, 'vis.routes')).status).toBe(204);
    expect((await pop(app.api, '/queue/vis.routes/partition/p')).status).toBe(204);
    expect((await pop(app.api, '', { namespace: 'visroutes' })).status).toBe(204);
  });
});
