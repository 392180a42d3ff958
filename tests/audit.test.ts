// The audit log (GET /api/v1/audit): its order and its pages, and what the details of each operator
// action name (so that the audit of a partition, a group or a queue finds it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { partitionIdsOf, popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const partitionIds = (queue: string) => partitionIdsOf(app.api, queue);
const auditOf = async (action: string) =>
  (
    await app.db.query<any>('select target, details from queen.audit_log where action = $1 order by id desc limit 1', [
      action,
    ])
  )[0];

// first: it counts every entry of the log
describe('the audit log', () => {
  it('lists newest first by time, then id (ids past 9 and past 99 too), and pages on from the newest', async () => {
    // 120 entries; their ids as text would sort 99 before 120
    await app.db.query(`insert into queen.audit_log (actor, action, target_type, target, result, at)
      select 'seed', 'cursor.pause', 'cursor', 'seed-' || n, 'ok', now() - make_interval(secs => 1000 - n) from generate_series(1, 120) n`);
    // a later entry with a lower id than the newest: time decides
    await app.db.query(`update queen.audit_log set at = now() + interval '1 hour' where target = 'seed-5'`);
    const first = await app.api.get('/api/v1/audit?limit=50');
    expect(first.status).toBe(200);
    const targets = first.body.entries.map((e: any) => e.target);
    expect(targets.slice(0, 3)).toEqual(['seed-5', 'seed-120', 'seed-119']);
    expect(targets).toHaveLength(50);
    const ats = first.body.entries.map((e: any) => Date.parse(e.at));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);

    const seen = new Set<string>(targets);
    let next = first.body.next;
    let pages = 1;
    while (next) {
      const page = await app.api.get(`/api/v1/audit?limit=50&before=${next}`);
      for (const e of page.body.entries) {
        expect(seen.has(e.target)).toBe(false);
        seen.add(e.target);
      }
      next = page.body.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.size).toBe(120);
  });
});

describe('audit details name what an action touched', () => {
  it('pause, resume, seek (with from/to), group delete and maintenance', async () => {
    await pushMany(app.api, 'f8.audit', 'p', 3);
    const { p } = await partitionIds('f8.audit');
    await popQueue(app.api, 'f8.audit', { consumerGroup: 'ga', batch: 1 });
    await app.api.post(`/api/v1/cursors/${p}/ga/pause`, { paused: true, reason: 'look' });
    const touched = {
      queue: 'f8.audit',
      group: 'ga',
      partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga' }],
    };
    expect((await auditOf('cursor.pause')).details).toMatchObject(touched);
    await app.api.post(`/api/v1/cursors/${p}/ga/pause`, { paused: false, reason: 'done' });
    expect((await auditOf('cursor.resume')).details).toMatchObject(touched);

    await app.api.post('/api/v1/consumer-groups/ga/queues/f8.audit/seek', { toEnd: true, reason: 'skip' });
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.audit',
      group: 'ga',
      toEnd: true,
      cursors: 1,
      partitionsMoved: 1,
      partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga', from: 0, to: 3 }],
    });
    await app.api.post('/api/v1/consumer-groups/ga/queues/f8.audit/partitions/p/seek', {
      timestamp: '2000-01-01T00:00:00Z',
      reason: 'replay',
    });
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.audit',
      group: 'ga',
      partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga', from: 3, to: 0 }],
    });
    const found = (await app.api.get(`/api/v1/audit?queue=f8.audit&group=ga&partitionId=${p}`)).body.entries.map(
      (e: any) => e.action,
    );
    expect(found).toEqual(['cursor.seek', 'cursor.seek', 'cursor.resume', 'cursor.pause']);
    // a message deleted on the partition is on the row of every group reading it, and on no other group's
    expect((await app.api.del(`/api/v1/messages/${p}/p-2?reason=poison`)).status).toBe(200);
    const row = (await app.api.get(`/api/v1/audit?queue=f8.audit&group=ga&partitionId=${p}`)).body.entries.map(
      (e: any) => e.action,
    );
    expect(row).toEqual(['message.delete', ...found]);
    expect((await app.api.get('/api/v1/audit?group=ga&action=message.delete')).body.entries).toHaveLength(1);
    expect((await app.api.get('/api/v1/audit?group=nobody&action=message.delete')).body.entries).toEqual([]);

    await app.api.del('/api/v1/consumer-groups/ga?reason=retired');
    expect((await auditOf('consumer_group.delete')).details).toMatchObject({ group: 'ga', queues: ['f8.audit'] });
    expect((await app.api.get('/api/v1/audit?queue=f8.audit&action=consumer_group.delete')).body.entries).toHaveLength(
      1,
    );

    await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'upgrade' });
    await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'done' });
    expect((await auditOf('maintenance.on')).details).toMatchObject({ enabled: true, wasEnabled: false });
    expect((await auditOf('maintenance.off')).details).toMatchObject({
      enabled: false,
      wasEnabled: true,
      previous: { enabled: true, reason: 'upgrade' },
    });
  });
});
