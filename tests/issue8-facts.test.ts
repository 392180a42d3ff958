// Issue 8, the broker's facts: a release says every partition and span it frees; fencing of acks
// without a lease id is what the words say; `stuck` includes expired leases and the overview
// agrees; audit rows name what they touched; an empty pop says `paused`; a dry run has no lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
const ack = (m: any, leaseId: string | null) =>
  app.api.post('/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, consumerGroup: m.consumerGroup, leaseId });
const partitionIds = async (queue: string) =>
  Object.fromEntries((await app.api.get(`/api/v1/resources/queues/${queue}`)).body.partitions.map((p: any) => [p.name, p.id]));
const auditOf = async (action: string) =>
  (await app.db.query<any>('select target, details from queen.audit_log where action = $1 order by id desc limit 1', [action]))[0];

describe('force release of a partitions=3 lease', () => {
  it('lists every partition it holds before, releases all of them, answers and audits each span', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'f8.multi', p, 2);
    const ids = await partitionIds('f8.multi');
    const r = await popQueue(app.api, 'f8.multi', { consumerGroup: 'g', partitions: 3 }, as('worker-7'));
    expect(r.body.partitionsClaimed).toBe(3);
    const leaseId = r.body.leaseId;

    const before = await app.api.get(`/api/v1/leases?lease=${leaseId}`);
    expect(before.body.total).toBe(3);
    expect(before.body.leases.map((l: any) => [l.partition, l.span.from, l.span.to]).sort()).toEqual([['a', 1, 2], ['b', 1, 2], ['c', 1, 2]]);
    expect((await app.api.get('/api/v1/leases?lease=not-a-lease')).status).toBe(400);

    const res = await app.api.post(`/api/v1/leases/${leaseId}/release`, { reason: 'worker hung' }, { headers: { 'x-queen-actor': 'oncall' } });
    expect(res.status).toBe(200);
    expect(res.body.partitions).toEqual(['a', 'b', 'c'].map((p) => ({
      partitionId: ids[p], consumerGroup: 'g', queue: 'f8.multi', partition: p, span: { from: 1, to: 2 }, holder: 'worker-7', expired: false,
    })));
    const [{ n }] = await app.db.query<{ n: number }>('select count(*)::int as n from queen.cursors where lease_id = $1', [leaseId]);
    expect(n).toBe(0);
    expect((await app.api.get(`/api/v1/leases?lease=${leaseId}`)).body.total).toBe(0);

    const audit = await auditOf('lease.release');
    expect(audit.target).toBe(leaseId);
    expect(audit.details).toMatchObject({ leaseId, queues: ['f8.multi'], group: 'g', holder: 'worker-7' });
    expect(audit.details.partitions).toEqual(['a', 'b', 'c'].map((p) => ({
      queue: 'f8.multi', partition: p, partitionId: ids[p], group: 'g', from: 1, to: 2, holder: 'worker-7', expired: false,
    })));
    // the audit is found from any of the partitions it freed, not only by the lease id
    for (const p of ['a', 'b', 'c']) {
      const found = await app.api.get(`/api/v1/audit?queue=f8.multi&group=g&partitionId=${ids[p]}`);
      expect(found.body.entries.map((e: any) => e.target)).toContain(leaseId);
    }
    expect((await app.api.get(`/api/v1/audit?queue=f8.multi&group=other&partitionId=${ids.a}`)).body.entries).toEqual([]);
    expect((await app.api.get('/api/v1/audit?partitionId=nope')).status).toBe(400);
  });
});

describe('fencing of acks after a release and a re-claim, several consumers at once', () => {
  it('refuses acks with the released id; judges acks without a lease id against the lease live then', async () => {
    await pushMany(app.api, 'f8.fence', 'p', 3);
    const a = await popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('A'));
    const [m1, m2, m3] = a.body.messages;
    await app.api.post(`/api/v1/leases/${a.body.leaseId}/release`, { reason: 'A hung' });

    // released, not re-claimed: no lease holds the offsets, so both kinds of ack are refused
    expect((await ack(m1, null)).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await ack(m1, a.body.leaseId)).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });

    // B and C race for the span: exactly one of them re-claims it
    const [b, c] = await Promise.all([popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('B')), popQueue(app.api, 'f8.fence', { consumerGroup: 'g' }, as('C'))]);
    const winner = b.status === 200 ? b : c;
    expect([b.status, c.status].sort()).toEqual([200, 204]);
    expect(winner.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0', 'p-1', 'p-2']);

    // A's ack with its old lease id is refused while the offset is not done; the winner's counts;
    // once done, A's repeat succeeds and changes nothing (every repeated ack does)
    expect((await ack(m2, a.body.leaseId)).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await ack(winner.body.messages[1], winner.body.leaseId)).body[0]).toMatchObject({ success: true });
    const acked = async () => (await app.db.query<{ acked: string[] }>(
      "select acked_offsets::text[] as acked from queen.cursors where partition_id = $1 and consumer_group = 'g'", [m2.partitionId]))[0].acked;
    expect(await acked()).toEqual(['2']);
    expect((await ack(m2, a.body.leaseId)).body[0]).toMatchObject({ success: true });
    expect(await acked()).toEqual(['2']);

    // an ack without a lease id cannot be told apart from the winner's: it is accepted inside the live lease
    const anonymous = await ack(m1, null);
    expect(anonymous.body[0]).toMatchObject({ success: true, error: null });
    const [cursor] = await app.db.query<any>(
      "select committed_offset::int as committed, lease_id from queen.cursors where partition_id = $1 and consumer_group = 'g'", [m1.partitionId]);
    expect(cursor).toEqual({ committed: 2, lease_id: winner.body.leaseId });
    expect((await ack(m3, winner.body.leaseId)).body[0]).toMatchObject({ success: true, leaseReleased: true });
  });
});

describe('stuck leases', () => {
  it('include expired, unreclaimed leases; the overview counts what the leases page lists, as the database does', async () => {
    for (const p of ['expired', 'held', 'healthy']) await pushMany(app.api, 'f8.stuck', p, 1);
    await pop(app.api, '/queue/f8.stuck/partition/expired', { consumerGroup: 'g', leaseSeconds: 1 });
    const held = await pop(app.api, '/queue/f8.stuck/partition/held', { consumerGroup: 'g', leaseSeconds: 1 });
    await app.api.post(`/api/v1/lease/${held.body.leaseId}/extend`, { seconds: 30 });
    await pop(app.api, '/queue/f8.stuck/partition/healthy', { consumerGroup: 'g', leaseSeconds: 60 });
    await sleep(2200);

    const stuck = (await app.api.get('/api/v1/leases?queue=f8.stuck&state=stuck')).body;
    // an extended lease is held long, not stuck (issue 20): stuck is judged by its current expiry
    expect(stuck.leases.map((l: any) => [l.partition, l.state]).sort()).toEqual([['expired', 'expired']]);
    expect((await app.api.get('/api/v1/leases?queue=f8.stuck&state=held-long')).body.leases.map((l: any) => l.partition)).toEqual(['held']);
    const expired = stuck.leases.find((l: any) => l.state === 'expired');
    expect(expired.heldSeconds).toBeLessThan(1.5); // stopped at the expiry, not still counting
    const [{ n }] = await app.db.query<{ n: number }>(`
      select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
      left join queen.message_attempts a on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = c.committed_offset + 1
      where q.name = 'f8.stuck' and c.lease_id is not null
        and (c.lease_expires_at <= now() or coalesce(a.deliveries, 1) > 3)`);
    expect(n).toBe(1);
    expect(stuck.total).toBe(n);
    const row = (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'f8.stuck');
    expect(row.stuckLeases).toBe(n);
    expect(row.problems.map((p: any) => p.text)).toContain('1 stuck lease (past their expiry, or first message delivered over 3 times)');
  });
});

describe('audit details name what an action touched', () => {
  it('pause, resume, seek (with from/to), group delete and maintenance', async () => {
    await pushMany(app.api, 'f8.audit', 'p', 3);
    const { p } = await partitionIds('f8.audit');
    await popQueue(app.api, 'f8.audit', { consumerGroup: 'ga', batch: 1 });
    await app.api.post(`/api/v1/cursors/${p}/ga/pause`, { paused: true, reason: 'look' });
    const touched = { queue: 'f8.audit', group: 'ga', partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga' }] };
    expect((await auditOf('cursor.pause')).details).toMatchObject(touched);
    await app.api.post(`/api/v1/cursors/${p}/ga/pause`, { paused: false, reason: 'done' });
    expect((await auditOf('cursor.resume')).details).toMatchObject(touched);

    await app.api.post('/api/v1/consumer-groups/ga/queues/f8.audit/seek', { toEnd: true, reason: 'skip' });
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.audit', group: 'ga', toEnd: true, cursors: 1, partitionsMoved: 1,
      partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga', from: 0, to: 3 }],
    });
    await app.api.post('/api/v1/consumer-groups/ga/queues/f8.audit/partitions/p/seek', { timestamp: '2000-01-01T00:00:00Z', reason: 'replay' });
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.audit', group: 'ga', partitions: [{ queue: 'f8.audit', partition: 'p', partitionId: p, group: 'ga', from: 3, to: 0 }],
    });
    const found = (await app.api.get(`/api/v1/audit?queue=f8.audit&group=ga&partitionId=${p}`)).body.entries.map((e: any) => e.action);
    expect(found).toEqual(['cursor.seek', 'cursor.seek', 'cursor.resume', 'cursor.pause']);
    // a message deleted on the partition is on the row of every group reading it, and on no other group's
    expect((await app.api.del(`/api/v1/messages/${p}/p-2?reason=poison`)).status).toBe(200);
    const row = (await app.api.get(`/api/v1/audit?queue=f8.audit&group=ga&partitionId=${p}`)).body.entries.map((e: any) => e.action);
    expect(row).toEqual(['message.delete', ...found]);
    expect((await app.api.get('/api/v1/audit?group=ga&action=message.delete')).body.entries).toHaveLength(1);
    expect((await app.api.get('/api/v1/audit?group=nobody&action=message.delete')).body.entries).toEqual([]);

    await app.api.del('/api/v1/consumer-groups/ga?reason=retired');
    expect((await auditOf('consumer_group.delete')).details).toMatchObject({ group: 'ga', queues: ['f8.audit'] });
    expect((await app.api.get('/api/v1/audit?queue=f8.audit&action=consumer_group.delete')).body.entries).toHaveLength(1);

    await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'upgrade' });
    await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'done' });
    expect((await auditOf('maintenance.on')).details).toMatchObject({ enabled: true, wasEnabled: false });
    expect((await auditOf('maintenance.off')).details).toMatchObject({ enabled: false, wasEnabled: true, previous: { enabled: true, reason: 'upgrade' } });
  });
});

describe('a queue-wide seek on the audit of a partition it did not move', () => {
  it('lists the partitions whose lease it ended, after the moved ones, so their rows find it', async () => {
    for (const p of ['held', 'idle']) await pushMany(app.api, 'f8.seek', p, 3);
    const { held, idle } = await partitionIds('f8.seek');
    const lease = await pop(app.api, '/queue/f8.seek/partition/held', { consumerGroup: 'gs', batch: 3 });
    const leaseId = lease.body.leaseId;
    expect(leaseId).toBeTruthy();
    // before every message: both cursors stay at 0, and the lease on `held` ends
    const res = await app.api.post('/api/v1/consumer-groups/gs/queues/f8.seek/seek', { timestamp: '2000-01-01T00:00:00Z', reason: 'replay' });
    expect(res.status).toBe(200);
    const [{ n }] = await app.db.query<{ n: number }>(`
      select count(*)::int as n from queen.cursors where consumer_group = 'gs' and partition_id = any ($1::uuid[]) and lease_id is null and committed_offset = 0`, [[held, idle]]);
    expect(n).toBe(2);
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.seek', group: 'gs', cursors: 2, partitionsMoved: 0, leasesEnded: 1,
      partitions: [{ queue: 'f8.seek', partition: 'held', partitionId: held, group: 'gs', from: 0, to: 0, leaseEnded: true, leaseId }],
    });
    const onRow = async (partitionId: string) =>
      (await app.api.get(`/api/v1/audit?queue=f8.seek&group=gs&partitionId=${partitionId}`)).body.entries.map((e: any) => e.action);
    expect(await onRow(held)).toEqual(['cursor.seek']);
    expect(await onRow(idle)).toEqual([]);

    // moved ones first, then the ended leases
    await pop(app.api, '/queue/f8.seek/partition/held', { consumerGroup: 'gs', batch: 1 });
    const consumed = await popQueue(app.api, 'f8.seek', { consumerGroup: 'gs', batch: 3 });
    expect(consumed.body.messages.map((m: any) => m.partitionId)).toEqual([idle, idle, idle]);
    await ackAll(app.api, consumed);
    await app.api.post('/api/v1/consumer-groups/gs/queues/f8.seek/seek', { timestamp: '2000-01-01T00:00:00Z', reason: 'again' });
    const again = (await auditOf('cursor.seek')).details;
    expect(again.partitions.map((p: any) => [p.partition, p.from, p.to, p.leaseEnded ?? false])).toEqual([['idle', 3, 0, false], ['held', 0, 0, true]]);
  });
});

describe('an empty pop says why', () => {
  it('paused: the partition asked for is paused, or every pending partition is paused or leased; else idle; always a bare 204', async () => {
    for (const p of ['x', 'y']) await pushMany(app.api, 'f8.paused', p, 1);
    const ids = await partitionIds('f8.paused');
    await app.api.post(`/api/v1/cursors/${ids.x}/g/pause`, { paused: true, reason: 'poison' });

    const one = await pop(app.api, '/queue/f8.paused/partition/x', { consumerGroup: 'g' });
    expect([one.status, one.empty, one.text]).toEqual([204, 'paused', '']);
    const y = await popQueue(app.api, 'f8.paused', { consumerGroup: 'g' });
    expect(y.body.messages.map((m: any) => m.partition)).toEqual(['y']); // not everything is paused
    const rest = await popQueue(app.api, 'f8.paused', { consumerGroup: 'g' });
    expect([rest.status, rest.empty, rest.text]).toEqual([204, 'paused', '']); // x paused, y leased
    const preview = await app.api.get('/api/dashboard/pop-preview?queue=f8.paused&consumerGroup=g');
    expect(preview.body).toMatchObject({ status: 204, empty: 'paused' });

    expect((await popQueue(app.api, 'f8.paused', { consumerGroup: 'other', partitions: 0 })).status).toBe(200);
    const drained = await popQueue(app.api, 'f8.paused', { consumerGroup: 'other' });
    expect([drained.status, drained.empty]).toEqual([204, 'idle']); // other group: nothing paused, all leased
    await app.api.post(`/api/v1/cursors/${ids.x}/g/pause`, { paused: false, reason: 'fixed' });
    expect((await pop(app.api, '/queue/f8.paused/partition/x', { consumerGroup: 'g' })).status).toBe(200);
  });
});

describe('the dry run', () => {
  it('shows what a pop would claim with no lease id: its lease was rolled back and never existed', async () => {
    await pushMany(app.api, 'f8.dry', 'p', 2);
    const preview = await app.api.get('/api/dashboard/pop-preview?queue=f8.dry&consumerGroup=gd');
    expect(preview.body.status).toBe(200);
    expect(preview.body.body.leaseId).toBeNull();
    expect(preview.body.body.messages.map((m: any) => m.leaseId)).toEqual([null, null]);
    expect(await app.db.query("select 1 from queen.cursors where consumer_group = 'gd'")).toEqual([]);
  });
});
