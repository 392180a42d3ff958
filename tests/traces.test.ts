// Message traces (sql/014): what msg.trace() records, the three reads, and that a trace goes with
// its message whichever way the message goes (retention, deleting it, deleting its queue).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '200' });
});
afterAll(() => app.stop());

const traceRows = (queue: string) =>
  app.db
    .query<{ n: number }>(
      `select count(*)::int as n from queen.traces t join queen.partitions p on p.id = t.partition_id
    join queen.queues q on q.id = p.queue_id where q.name = $1`,
      [queue],
    )
    .then((r) => r[0].n);

/** Pushes `count` messages and answers the partition id, popping nothing. */
async function pushed(queue: string, count: number) {
  await pushMany(app.api, queue, 'p', count, queue);
  const q = (await app.api.get(`/api/v1/resources/queues/${queue}`)).body;
  return q.partitions.find((p: any) => p.name === 'p').id as string;
}

const trace = (partitionId: string, transactionId: string, extra: Record<string, unknown> = {}) =>
  app.api.post('/api/v1/traces', { transactionId, partitionId, data: { step: 'x' }, ...extra });

describe('POST /api/v1/traces', () => {
  it('records an event with its names, group and type, and the message reads them back oldest first', async () => {
    const pid = await pushed('tr.read', 1);
    const first = await trace(pid, 'tr.read-0', {
      consumerGroup: 'billing',
      eventType: 'processing',
      traceNames: 'order-1',
      data: { step: 1 },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, traceId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await trace(pid, 'tr.read-0', { traceNames: ['order-1', 'tenant-7', 'order-1'], data: { step: 2 } });
    const res = await app.api.get(`/api/v1/traces/${pid}/tr.read-0`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      count: 2,
      traces: [
        {
          id: first.body.traceId,
          eventType: 'processing',
          consumerGroup: 'billing',
          data: { step: 1 },
          traceNames: ['order-1'],
          createdAt: expect.stringMatching(/Z$/),
        },
        {
          id: expect.any(String),
          eventType: 'info',
          consumerGroup: '__QUEUE_MODE__',
          data: { step: 2 },
          traceNames: ['order-1', 'tenant-7'],
          createdAt: expect.stringMatching(/Z$/),
        },
      ],
    });
    expect(res.body.traces[0].createdAt <= res.body.traces[1].createdAt).toBe(true);
  });

  it('a message with no trace answers an empty list; an unknown one 404', async () => {
    const pid = await pushed('tr.empty', 1);
    expect((await app.api.get(`/api/v1/traces/${pid}/tr.empty-0`)).body).toEqual({ traces: [], count: 0 });
    expect((await app.api.get(`/api/v1/traces/${pid}/nope`)).status).toBe(404);
    expect((await app.api.get('/api/v1/traces/not-a-uuid/tr.empty-0')).status).toBe(404);
  });

  it('refuses an unknown message with 404 Message not found, and bad input with a 400 naming the field, writing nothing', async () => {
    const pid = await pushed('tr.bad', 1);
    const unknown = await trace(pid, 'missing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: 'Message not found' });
    expect((await trace('not-a-uuid', 'tr.bad-0')).status).toBe(404);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ partitionId: pid, data: {} }, /^transactionId: /],
      [{ transactionId: 'tr.bad-0', data: {} }, /^partitionId: /],
      [{ transactionId: 'tr.bad-0', partitionId: pid }, /^data: /],
      [{ transactionId: 'tr.bad-0', partitionId: pid, data: {}, traceNames: [''] }, /^traceNames/],
      [{ transactionId: 'tr.bad-0', partitionId: pid, data: {}, traceNames: 7 }, /^traceNames: /],
      [{ transactionId: 'tr.bad-0', partitionId: pid, data: {}, eventType: 'x'.repeat(600) }, /^eventType: /],
    ];
    for (const [body, error] of cases) {
      const res = await app.api.post('/api/v1/traces', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(error);
    }
    expect(await traceRows('tr.bad')).toBe(0);
  });
});

describe('trace reads by name', () => {
  it('by-name: the traces carrying a name with their message, paged; names: counts per name', async () => {
    const pid = await pushed('tr.names', 3);
    for (let i = 0; i < 3; i++)
      await trace(pid, `tr.names-${i}`, { traceNames: ['tr-shared', `tr-only-${i}`], data: { i } });
    await trace(pid, 'tr.names-0', { traceNames: 'tr-shared', data: { i: 'again' } });
    const all = await app.api.get('/api/v1/traces/by-name/tr-shared');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ count: 4, total: 4, limit: 100, offset: 0 });
    expect(all.body.traces.map((t: any) => t.data.i)).toEqual([0, 1, 2, 'again']);
    expect(all.body.traces[0]).toEqual({
      id: expect.any(String),
      transactionId: 'tr.names-0',
      partitionId: pid,
      queue: 'tr.names',
      partition: 'p',
      eventType: 'info',
      consumerGroup: '__QUEUE_MODE__',
      data: { i: 0 },
      traceNames: ['tr-shared', 'tr-only-0'],
      createdAt: expect.stringMatching(/Z$/),
    });
    const page = await app.api.get('/api/v1/traces/by-name/tr-shared?limit=2&offset=1');
    expect(page.body).toMatchObject({ count: 2, total: 4, limit: 2, offset: 1 });
    expect(page.body.traces.map((t: any) => t.data.i)).toEqual([1, 2]);
    expect((await app.api.get('/api/v1/traces/by-name/never-used')).body).toMatchObject({
      traces: [],
      count: 0,
      total: 0,
    });

    const names = await app.api.get('/api/v1/traces/names?limit=1000');
    expect(names.status).toBe(200);
    const shared = names.body.traceNames.find((n: any) => n.traceName === 'tr-shared');
    expect(shared).toEqual({
      traceName: 'tr-shared',
      traceCount: 4,
      messageCount: 3,
      lastSeen: expect.stringMatching(/Z$/),
    });
    expect(names.body.traceNames.find((n: any) => n.traceName === 'tr-only-1')).toMatchObject({
      traceCount: 1,
      messageCount: 1,
    });
    expect(names.body.total).toBe(names.body.traceNames.length);
    expect((await app.api.get('/api/v1/traces/names?limit=1')).body).toMatchObject({ count: 1, limit: 1, offset: 0 });
  });

  it('refuses bad paging with a 400 naming the field', async () => {
    for (const [path, field] of [
      ['/api/v1/traces/names?limit=0', 'limit'],
      ['/api/v1/traces/names?limit=1001', 'limit'],
      ['/api/v1/traces/names?offset=-1', 'offset'],
      ['/api/v1/traces/by-name/x?limit=abc', 'limit'],
      [`/api/v1/traces/by-name/${'x'.repeat(600)}`, 'name'],
    ]) {
      const res = await app.api.get(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: `));
    }
  });
});

describe('traces go with their message', () => {
  it('retention deletes the traces of the messages it deletes, and only those', async () => {
    await app.api.post('/api/v1/configure', {
      queue: 'tr.retain',
      options: { retentionEnabled: true, retentionSeconds: 1, ttl: 0 },
    });
    const pid = await pushed('tr.retain', 2);
    await trace(pid, 'tr.retain-0', { traceNames: 'tr-retained' });
    await trace(pid, 'tr.retain-1');
    const kept = await pushed('tr.kept', 1);
    await trace(kept, 'tr.kept-0');
    expect(await traceRows('tr.retain')).toBe(2);
    const deadline = Date.now() + 8000;
    while ((await traceRows('tr.retain')) > 0 && Date.now() < deadline) await sleep(100);
    expect(await traceRows('tr.retain')).toBe(0);
    expect(await app.db.query(`select 1 from queen.messages where partition_id = $1`, [pid])).toEqual([]);
    expect(await traceRows('tr.kept')).toBe(1);
    expect((await app.api.get('/api/v1/traces/by-name/tr-retained')).body.total).toBe(0);
  });

  it('deleting the message or its queue deletes its traces', async () => {
    const pid = await pushed('tr.gone', 2);
    await trace(pid, 'tr.gone-0');
    await trace(pid, 'tr.gone-1');
    expect((await app.api.del(`/api/v1/messages/${pid}/tr.gone-0`)).status).toBe(200);
    expect(await app.db.query(`select transaction_id from queen.traces where partition_id = $1`, [pid])).toEqual([
      { transaction_id: 'tr.gone-1' },
    ]);
    expect((await app.api.del('/api/v1/resources/queues/tr.gone')).body).toMatchObject({
      deleted: true,
      existed: true,
    });
    expect(await app.db.query(`select 1 from queen.traces where partition_id = $1`, [pid])).toEqual([]);
  });

  it('a trace for a message being consumed is recorded against it; popping does not need one', async () => {
    await pushed('tr.pop', 1);
    const r = await popQueue(app.api, 'tr.pop', { consumerGroup: 'g' });
    const m = r.body.messages[0];
    expect((await trace(m.partitionId, m.transactionId, { consumerGroup: 'g' })).body.success).toBe(true);
    expect((await app.api.get(`/api/v1/traces/${m.partitionId}/${m.transactionId}`)).body.traces[0].consumerGroup).toBe(
      'g',
    );
  });
});
