// Issue 34, item 2: every change to a queue is in the audit log: configure with the options before
// and after (and nothing when nothing changed), delete with what it removed (each figure equal to a
// count taken before), both found by the queue's audit filter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const audits = (queue: string) =>
  app.db.query<any>(
    `select actor, action, target, reason, result, details from queen.audit_log where target = $1 and action like 'queue.%' order by id`,
    [queue],
  );

describe('queue changes are audited', () => {
  it('configure: created, then the options before and after; a configure that changes nothing writes nothing', async () => {
    const actor = { headers: { 'x-queen-actor': 'alice' } };
    expect(
      (await app.api.post('/api/v1/configure', { queue: 'qa.cfg', options: { leaseTime: 30 } }, actor)).status,
    ).toBe(200);
    expect(
      (await app.api.post('/api/v1/configure', { queue: 'qa.cfg', options: { leaseTime: 90, retryLimit: 7 } }, actor))
        .status,
    ).toBe(200);
    await app.api.post('/api/v1/configure', { queue: 'qa.cfg', options: { leaseTime: 90, retryLimit: 7 } }, actor);
    const rows = await audits('qa.cfg');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ actor: 'alice', action: 'queue.configure', result: 'created' });
    expect(rows[0].details.before).toBeNull();
    expect(rows[0].details.after).toMatchObject({ leaseTime: 30 });
    expect(rows[1]).toMatchObject({ action: 'queue.configure', result: 'configured' });
    expect(rows[1].details.before).toMatchObject({ leaseTime: 30 });
    expect(rows[1].details.after).toMatchObject({ leaseTime: 90, retryLimit: 7 });
    expect(rows[1].details.changed).toEqual(['leaseTime', 'retryLimit']);
    // an implicit queue configured for the first time says so
    await pushMany(app.api, 'qa.implicit', 'p', 1);
    await app.api.post('/api/v1/configure', { queue: 'qa.implicit' });
    expect((await audits('qa.implicit'))[0].details.before).toMatchObject({ configured: false });
  });

  it("configure: an operator's reason goes to the row; a bad one is a 400 naming it that changes nothing", async () => {
    await app.api.post('/api/v1/configure', { queue: 'qa.why', options: { leaseTime: 30 } });
    const res = await app.api.post(
      '/api/v1/configure',
      { queue: 'qa.why', options: { leaseTime: 45 }, reason: 'consumers need longer' },
      { headers: { 'x-queen-actor': 'carol' } },
    );
    expect(res.status).toBe(200);
    const rows = await audits('qa.why');
    expect(rows.map((r) => r.reason)).toEqual([null, 'consumers need longer']);
    expect(rows[1]).toMatchObject({ actor: 'carol', result: 'configured', details: { changed: ['leaseTime'] } });
    const bad = await app.api.post('/api/v1/configure', {
      queue: 'qa.why',
      options: { leaseTime: 60 },
      reason: 'x'.repeat(501),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^reason/);
    expect((await app.api.get('/api/v1/resources/queues/qa.why')).body.options.leaseTime).toBe(45);
    expect(await audits('qa.why')).toHaveLength(2);
  });

  it('delete: who, why, and what it removed, found by the queue filter after the queue is gone', async () => {
    await app.api.post('/api/v1/configure', { queue: 'qa.del', options: { retryLimit: 0 } });
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'qa.del', p, 4);
    const held = await popQueue(
      app.api,
      'qa.del',
      { consumerGroup: 'billing', batch: 2, leaseSeconds: 300 },
      {
        headers: { 'x-queen-consumer': 'worker-1' },
      },
    );
    await popQueue(app.api, 'qa.del', { consumerGroup: 'fraud', batch: 4, autoAck: true });
    // one dead letter of billing: a failed ack past a retry limit of 0
    await app.api.post('/api/v1/ack/batch', {
      consumerGroup: 'billing',
      acknowledgments: [
        {
          transactionId: held.body.messages[0].transactionId,
          partitionId: held.body.messages[0].partitionId,
          leaseId: held.body.leaseId,
          status: 'failed',
          error: 'boom',
        },
      ],
    });
    const [before] = await app.db.query<any>(`
      select (select count(*)::int from queen.partitions p where p.queue_id = q.id) as partitions,
             (select count(*)::int from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id) as messages,
             (select count(*)::int from queen.dead_letters d join queen.partitions p on p.id = d.partition_id where p.queue_id = q.id) as dead,
             (select count(*)::int from queen.cursors c where c.queue_id = q.id and c.lease_id is not null) as leases
      from queen.queues q where q.name = 'qa.del'`);
    const res = await app.api.del('/api/v1/resources/queues/qa.del?reason=replaced%20by%20qa.del2', {
      headers: { 'x-queen-actor': 'bob' },
    });
    expect(res.status).toBe(200);
    const [row] = await audits('qa.del').then((r) => r.filter((a) => a.action === 'queue.delete'));
    expect(row).toMatchObject({ actor: 'bob', reason: 'replaced by qa.del2', result: 'deleted' });
    expect(row.details.options).toMatchObject({ retryLimit: 0 });
    expect(row.details.removed).toMatchObject({
      partitions: before.partitions,
      messages: before.messages,
      deadLetters: before.dead,
      liveLeases: before.leases,
    });
    expect(before).toMatchObject({ partitions: 4, messages: 12, dead: 1 }); // a, b, c and configure's Default
    expect(row.details.removed.groups.map((g: any) => g.group).sort()).toEqual(['billing', 'fraud']);
    expect(row.details.removed.leases).toHaveLength(before.leases);
    // the queue's audit filter finds both its configure and its delete
    const found = await app.api.get('/api/v1/audit?queue=qa.del');
    expect(found.body.entries.map((e: any) => e.action)).toEqual(['queue.delete', 'queue.configure']);
    // a bad reason is a 400 naming it, and deletes nothing
    await app.api.post('/api/v1/configure', { queue: 'qa.del3' });
    const bad = await app.api.del(`/api/v1/resources/queues/qa.del3?reason=${'x'.repeat(501)}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/reason/);
  });
});
