// Issue 34: a requeue or discard of many dead letters (a selection, every match of a filter, an
// error group) is one operator action and writes one audit row listing its targets, as a bulk lease
// release does; the audit filters by queue, partition and group still find it. One dead letter that
// went keeps the message as the row's target.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
});
afterAll(() => app?.stop());

/** `count` messages of queue/partition failed by `group` until dead (retryLimit 0: one failure), with the error given. */
async function deadLetters(queue: string, partition: string, count: number, group: string, error: string) {
  await app.api.post('/api/v1/configure', { queue, options: { retryLimit: 0, retryDelay: 0 } });
  await pushMany(app.api, queue, partition, count, `${partition}.${group}`);
  const reply = await pop(app.api, `/queue/${queue}/partition/${partition}`, { consumerGroup: group, batch: count });
  expect(reply.status).toBe(200);
  await ackAll(app.api, reply, 'failed', error);
  const res = await app.api.get(
    `/api/v1/dlq?queue=${queue}&consumerGroup=${group}&partition=${partition}&error=${encodeURIComponent(error)}`,
  );
  expect(res.body.pagination.total).toBe(count);
  return (res.body.messages as any[]).sort((a, b) => a.offset - b.offset);
}

const key = (d: any) => ({ partitionId: d.partitionId, consumerGroup: d.consumerGroup, offset: d.offset });
const rowsOf = (action: string, reason: string) =>
  app.db.query<any>(
    'select actor, target_type, target, reason, result, details from queen.audit_log where action = $1 and reason = $2 order by id',
    [action, reason],
  );
const auditIds = async (query: string) =>
  ((await app.api.get(`/api/v1/audit?${query}`)).body.entries as any[]).map((e) => e.id);

describe('bulk dead-letter actions are audited once', () => {
  it('a requeue of a selection writes one row listing every dead letter that went, found by its queue, partitions and group', async () => {
    const a = await deadLetters('dla.sel', 'a', 2, 'billing', 'card declined');
    const b = await deadLetters('dla.sel', 'b', 1, 'billing', 'card declined');
    const unknown = { ...key(a[0]), offset: 999 };
    const res = await app.api.post(
      '/api/v1/dlq/requeue',
      { items: [...a, ...b].map(key).concat(unknown), reason: 'bank is back' },
      { headers: { 'x-queen-actor': 'alice' } },
    );
    expect(res.body.requeued).toBe(3);
    const rows = await rowsOf('dlq.requeue', 'bank is back');
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      actor: 'alice',
      target_type: 'dead_letters',
      target: '3 dead letters',
      result: 'requeued',
    });
    expect(row.details).toMatchObject({ deadLetters: 3, queues: ['dla.sel'], queue: 'dla.sel', group: 'billing' });
    expect(row.details.partitions).toEqual(
      [...a, ...b].map((d) =>
        expect.objectContaining({
          queue: 'dla.sel',
          partition: d.partition,
          partitionId: d.partitionId,
          group: 'billing',
          offset: d.offset,
          transactionId: d.transactionId,
          newTransactionId: `${d.transactionId}.requeue-1`,
          lastError: 'card declined',
        }),
      ),
    );
    // the audit page's filters find the one row from the queue, either partition and the group
    const [id] = await app.db.query<{ id: string }>(
      "select id::text from queen.audit_log where action = 'dlq.requeue' and reason = 'bank is back'",
    );
    for (const q of [
      'queue=dla.sel',
      `partitionId=${a[0].partitionId}`,
      `partitionId=${b[0].partitionId}`,
      'group=billing&queue=dla.sel',
    ])
      expect(await auditIds(q)).toContain(id.id);
  });

  it('a discard of every match of a filter over two queues and two groups writes one row naming both queues', async () => {
    const x = await deadLetters('dla.fx', 'p', 3, 'g', 'schema mismatch v7');
    const y = await deadLetters('dla.fy', 'p', 2, 'h', 'schema mismatch v7');
    const res = await app.api.post('/api/v1/dlq/discard', {
      filter: { errorIs: 'schema mismatch v7' },
      reason: 'old schema, dropped',
    });
    expect(res.body.discarded).toBe(5);
    const rows = await rowsOf('dlq.discard', 'old schema, dropped');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ target: '5 dead letters', result: 'discarded' });
    expect([...rows[0].details.queues].sort()).toEqual(['dla.fx', 'dla.fy']);
    expect(rows[0].details.queue).toBeUndefined();
    expect(rows[0].details.group).toBeUndefined();
    expect(rows[0].details.partitions.map((p: any) => `${p.queue}/${p.group}/${p.offset}`).sort()).toEqual(
      [...x.map((d) => `dla.fx/g/${d.offset}`), ...y.map((d) => `dla.fy/h/${d.offset}`)].sort(),
    );
    const [{ id }] = await app.db.query<{ id: string }>(
      "select id::text from queen.audit_log where action = 'dlq.discard' and reason = 'old schema, dropped'",
    );
    expect(await auditIds('queue=dla.fy&group=h')).toContain(id);
  });

  it('one dead letter that went keeps the message as the target; nothing that went writes nothing', async () => {
    const [d, e] = await deadLetters('dla.one', 'p', 2, 'g', 'boom');
    await app.api.post('/api/v1/dlq/discard', { items: [key(e)], reason: 'first' });
    // of two items one is gone already: the one that went is the row
    await app.api.post('/api/v1/dlq/requeue', { items: [key(d), key(e)], reason: 'second' });
    const rows = await rowsOf('dlq.requeue', 'second');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ target_type: 'message', target: `${d.partitionId}/${d.transactionId}` });
    expect(rows[0].details).toMatchObject({ queue: 'dla.one', group: 'g', offset: d.offset });
    await app.api.post('/api/v1/dlq/discard', { items: [key(d), key(e)], reason: 'third' });
    expect(await rowsOf('dlq.discard', 'third')).toEqual([]);
  });
});
