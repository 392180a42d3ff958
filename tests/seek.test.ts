// Seeking a group's cursors: a whole queue (to the end, to a time, past a dead letter; what it ends and
// how it is audited), one partition, and the preview that counts what a seek would do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, partitionIdsOf, pop, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const configure = (queue: string, options: Record<string, unknown>) =>
  app.api.post('/api/v1/configure', { queue, options });
const ack = (reply: any, i: number, status: 'completed' | 'failed', group: string) =>
  app.api.post('/api/v1/ack', {
    transactionId: reply.body.messages[i].transactionId,
    partitionId: reply.body.messages[i].partitionId,
    leaseId: reply.body.leaseId,
    status,
    consumerGroup: group,
    error: status === 'failed' ? 'boom' : null,
  });
const audit = (action: string) =>
  app.db.query<any>(
    'select actor, target, reason, result, details from queen.audit_log where action = $1 order by id',
    [action],
  );
const partitionIds = (queue: string) => partitionIdsOf(app.api, queue);
const auditOf = async (action: string) =>
  (
    await app.db.query<any>('select target, details from queen.audit_log where action = $1 order by id desc limit 1', [
      action,
    ])
  )[0];
const preview = (group: string, queue: string, qs: string) =>
  app.api.get(`/api/v1/consumer-groups/${group}/queues/${encodeURIComponent(queue)}/seek/preview?${qs}`);

describe('seek a group on a queue', () => {
  // first: it reads every cursor.seek row of the audit log
  it('seek to the end, or to a timestamp, moving the cursors and ending any live lease (audited)', async () => {
    await pushMany(app.api, 'cg.seek', 'p', 2);
    await sleep(50);
    const middle = new Date().toISOString();
    await sleep(50);
    await pushMany(app.api, 'cg.seek', 'p', 2, 'p', 2);
    const held = await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' });
    const toEnd = await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', {
      toEnd: true,
      reason: 'skip the backlog',
    });
    expect(toEnd.body).toEqual({ success: true, consumerGroup: 'seeker', queueName: 'cg.seek', partitionsUpdated: 1 });
    expect((await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' })).status).toBe(204);
    const late = await app.api.post('/api/v1/ack', {
      transactionId: 'p-0',
      partitionId: held.body.partitionId,
      consumerGroup: 'seeker',
      leaseId: held.body.leaseId,
    });
    expect(late.body[0].success).toBe(true); // at or below the cursor now: done, idempotently
    await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', { timestamp: middle });
    const replay = await popQueue(app.api, 'cg.seek', { consumerGroup: 'seeker' });
    expect(replay.body.messages.map((m: any) => m.data.seq)).toEqual([2, 3]);
    expect((await audit('cursor.seek')).map((a: any) => [a.target, a.reason])).toEqual([
      ['seeker@cg.seek', 'skip the backlog'],
      ['seeker@cg.seek', null],
    ]);
    expect((await app.api.post('/api/v1/consumer-groups/seeker/queues/nope/seek', { toEnd: true })).status).toBe(404);
    expect((await app.api.post('/api/v1/consumer-groups/seeker/queues/cg.seek/seek', { toEnd: false })).status).toBe(
      400,
    );
  });

  it('after a seek back past a dead-lettered message, it is dead-lettered again and the next message is delivered', async () => {
    await configure('d3.q', { retryLimit: 1, retryDelay: 0 });
    await pushMany(app.api, 'd3.q', 'p', 2, 'd3');
    const failTwice = async () => {
      let dlq = false;
      for (let i = 0; i < 2; i++) {
        const r = await popQueue(app.api, 'd3.q', { consumerGroup: 'g', batch: 1 });
        expect(r.body.messages[0].transactionId).toBe('d3-0');
        dlq = (await ack(r, 0, 'failed', 'g')).body[0].dlq;
      }
      return dlq;
    };
    const next = async () => {
      const r = await popQueue(app.api, 'd3.q', { consumerGroup: 'g', batch: 1 });
      expect(r.body.messages[0].transactionId).toBe('d3-1');
      await ackAll(app.api, r);
      return r;
    };
    expect(await failTwice()).toBe(true);
    const first = await next();
    const before = new Date(Date.parse(first.body.messages[0].createdAt) - 1000).toISOString();
    expect(
      (await app.api.post('/api/v1/consumer-groups/g/queues/d3.q/seek', { timestamp: before, reason: 'replay' }))
        .status,
    ).toBe(200);
    expect(await failTwice()).toBe(true);
    await next();
    const dead = await app.db.query<{
      n: number;
    }>(`select count(*)::int as n from queen.dead_letters d join queen.cursors c
      on c.partition_id = d.partition_id and c.consumer_group = d.consumer_group join queen.queues q on q.id = c.queue_id where q.name = 'd3.q'`);
    expect(dead[0].n).toBe(1); // one row, renewed
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
    const res = await app.api.post('/api/v1/consumer-groups/gs/queues/f8.seek/seek', {
      timestamp: '2000-01-01T00:00:00Z',
      reason: 'replay',
    });
    expect(res.status).toBe(200);
    const [{ n }] = await app.db.query<{ n: number }>(
      `
      select count(*)::int as n from queen.cursors where consumer_group = 'gs' and partition_id = any ($1::uuid[]) and lease_id is null and committed_offset = 0`,
      [[held, idle]],
    );
    expect(n).toBe(2);
    expect((await auditOf('cursor.seek')).details).toMatchObject({
      queue: 'f8.seek',
      group: 'gs',
      cursors: 2,
      partitionsMoved: 0,
      leasesEnded: 1,
      partitions: [
        {
          queue: 'f8.seek',
          partition: 'held',
          partitionId: held,
          group: 'gs',
          from: 0,
          to: 0,
          leaseEnded: true,
          leaseId,
        },
      ],
    });
    const onRow = async (partitionId: string) =>
      (await app.api.get(`/api/v1/audit?queue=f8.seek&group=gs&partitionId=${partitionId}`)).body.entries.map(
        (e: any) => e.action,
      );
    expect(await onRow(held)).toEqual(['cursor.seek']);
    expect(await onRow(idle)).toEqual([]);

    // moved ones first, then the ended leases
    await pop(app.api, '/queue/f8.seek/partition/held', { consumerGroup: 'gs', batch: 1 });
    const consumed = await popQueue(app.api, 'f8.seek', { consumerGroup: 'gs', batch: 3 });
    expect(consumed.body.messages.map((m: any) => m.partitionId)).toEqual([idle, idle, idle]);
    await ackAll(app.api, consumed);
    await app.api.post('/api/v1/consumer-groups/gs/queues/f8.seek/seek', {
      timestamp: '2000-01-01T00:00:00Z',
      reason: 'again',
    });
    const again = (await auditOf('cursor.seek')).details;
    expect(again.partitions.map((p: any) => [p.partition, p.from, p.to, p.leaseEnded ?? false])).toEqual([
      ['idle', 3, 0, false],
      ['held', 0, 0, true],
    ]);
  });
});

describe('seek preview', () => {
  const cursors = async (queue: string, group: string) =>
    Object.fromEntries(
      (
        await app.db.query<{ name: string; committed: number }>(
          `select p.name, c.committed_offset::int as committed from queen.cursors c join queen.partitions p on p.id = c.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = $1 and c.consumer_group = $2`,
          [queue, group],
        )
      ).map((r) => [r.name, r.committed]),
    );

  it('counts what the seek then does: to the end, to the beginning, one partition', async () => {
    for (const p of ['a', 'b', 'c']) await pushMany(app.api, 'sk.q', p, 8);
    for (const p of ['a', 'b', 'c'])
      await ackAll(app.api, await pop(app.api, `/queue/sk.q/partition/${p}`, { consumerGroup: 'g', batch: 3 })); // 1–3 done
    const live = await pop(app.api, '/queue/sk.q/partition/a', { consumerGroup: 'g', batch: 2 }); // a: 4–5 leased

    const before = await cursors('sk.q', 'g');
    const toEnd = await preview('g', 'sk.q', 'toEnd=true');
    expect(toEnd.status).toBe(200);
    expect(toEnd.body).toMatchObject({
      partitions: 3,
      partitionsMoved: 3,
      skipped: 15,
      replayed: 0,
      leasesEnded: 1,
      changesTruncated: false,
    });
    expect(toEnd.body.changes.find((c: any) => c.partition === live.body.partition)).toMatchObject({ endsLease: true });
    const seek = await app.api.post('/api/v1/consumer-groups/g/queues/sk.q/seek', { toEnd: true, reason: 'test' });
    expect(seek.status).toBe(200);
    const after = await cursors('sk.q', 'g');
    const moved = Object.keys(after).map((p) => after[p] - before[p]);
    expect(moved.filter((d) => d > 0).reduce((s, d) => s + d, 0)).toBe(toEnd.body.skipped);
    for (const c of toEnd.body.changes) expect(after[c.partition]).toBe(c.target);

    const back = await preview('g', 'sk.q', `timestamp=${encodeURIComponent('1970-01-01T00:00:00Z')}`);
    expect(back.body).toMatchObject({ skipped: 0, replayed: 24, partitionsMoved: 3, leasesEnded: 0 });
    await app.api.post('/api/v1/consumer-groups/g/queues/sk.q/seek', {
      timestamp: '1970-01-01T00:00:00Z',
      reason: 'replay',
    });
    const replayed = await cursors('sk.q', 'g');
    expect(Object.keys(replayed).reduce((s, p) => s + after[p] - replayed[p], 0)).toBe(back.body.replayed);

    const one = await preview('g', 'sk.q', 'toEnd=true&partition=b');
    expect(one.body).toMatchObject({
      partitionName: 'b',
      partitions: 1,
      skipped: 8,
      changes: [{ partition: 'b', committed: 0, target: 8 }],
    });
    await app.api.post('/api/v1/consumer-groups/g/queues/sk.q/partitions/b/seek', { toEnd: true });
    expect((await cursors('sk.q', 'g')).b).toBe(8);
  });

  it('a group that has no cursors yet starts from its seed; lists at most `limit` partitions', async () => {
    for (const p of ['x', 'y']) await pushMany(app.api, 'sk.new', p, 3);
    const res = await preview('fresh', 'sk.new', 'toEnd=true&limit=1');
    expect(res.body).toMatchObject({
      partitions: 2,
      skipped: 6,
      changes: [{ partition: 'x', committed: 0, target: 3 }],
      changesTruncated: true,
    });
    await app.api.post('/api/v1/consumer-groups/fresh/queues/sk.new/seek', { toEnd: true });
    expect(Object.values(await cursors('sk.new', 'fresh')).reduce((s, n) => s + n, 0)).toBe(6);
  });

  it('refuses a missing or doubled target, bad values, and 404s an unknown queue or partition', async () => {
    await pushMany(app.api, 'sk.bad', 'p', 1);
    expect((await preview('g', 'sk.bad', '')).body.error).toMatch(/toEnd=true or timestamp/);
    expect((await preview('g', 'sk.bad', 'toEnd=true&timestamp=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await preview('g', 'sk.bad', 'toEnd=yes')).body.error).toMatch(/^toEnd: /);
    expect((await preview('g', 'sk.bad', 'timestamp=yesterday')).body.error).toMatch(/^timestamp: /);
    expect((await preview('g', 'sk.bad', 'toEnd=true&limit=1001')).body.error).toMatch(/^limit: /);
    expect((await preview('g', 'sk.ghost', 'toEnd=true')).status).toBe(404);
    expect((await preview('g', 'sk.bad', 'toEnd=true&partition=nope')).status).toBe(404);
    // nothing moved, nothing created
    expect(
      await app.db.query(
        `select 1 from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = 'sk.bad'`,
      ),
    ).toEqual([]);
  });
});

describe('POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek', () => {
  // A database of its own: its first test reads every cursor.seek row of the audit log, and so does
  // the first test of the queue-wide seek above.
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
  });
  afterAll(() => app.stop());

  const cursors = (queue: string, group: string) =>
    app.db.query<any>(
      `select p.name, c.committed_offset::int as committed, c.lease_id from queen.cursors c
      join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
      where q.name = $1 and c.consumer_group = $2 order by p.name`,
      [queue, group],
    );
  const url = (group: string, queue: string, partition: string) =>
    `/api/v1/consumer-groups/${group}/queues/${queue}/partitions/${partition}/seek`;

  it('moves exactly one cursor, ends its lease, keeps the figures right, and is audited like the queue-wide seek', async () => {
    await pushMany(app.api, 'ps.q', 'a', 3, 'a');
    await pushMany(app.api, 'ps.q', 'b', 2, 'b');
    const held = await popQueue(app.api, 'ps.q', { consumerGroup: 'seeker', batch: 1 });
    const heldPartition = held.body.messages[0].transactionId[0];
    const before = await cursors('ps.q', 'seeker');
    const res = await app.api.post(url('seeker', 'ps.q', heldPartition), { toEnd: true, reason: 'skip a poison span' });
    expect(res.status).toBe(200);
    const head = heldPartition === 'a' ? 3 : 2;
    expect(res.body).toEqual({
      success: true,
      consumerGroup: 'seeker',
      queueName: 'ps.q',
      partitionName: heldPartition,
      cursorMovedTo: head,
    });
    const after = await cursors('ps.q', 'seeker');
    expect(after.find((c: any) => c.name === heldPartition)).toEqual({
      name: heldPartition,
      committed: head,
      lease_id: null,
    });
    expect(after.filter((c: any) => c.name !== heldPartition)).toEqual(
      before.filter((c: any) => c.name !== heldPartition),
    );
    const group = (await app.api.get('/api/v1/consumer-groups')).body.find(
      (g: any) => g.name === 'seeker' && g.queueName === 'ps.q',
    );
    expect(group.totalLag).toBe(5 - head);
    const replay = await popQueue(app.api, 'ps.q', { consumerGroup: 'seeker', batch: 10, partitions: 5 });
    expect(replay.body.messages.every((m: any) => m.transactionId[0] !== heldPartition)).toBe(true);
    const audit = await app.db.query<any>(
      `select target_type, target, reason, result, details from queen.audit_log where action = 'cursor.seek'`,
    );
    expect(audit).toEqual([
      {
        target_type: 'consumer_group',
        target: `seeker@ps.q/${heldPartition}`,
        reason: 'skip a poison span',
        result: 'ok',
        details: expect.objectContaining({ toEnd: true, partition: heldPartition, from: 0, to: head, cursors: 1 }),
      },
    ]);
  });

  it('seeks back to a timestamp, replaying from there on that partition only', async () => {
    await pushMany(app.api, 'ps.back', 'a', 2, 'old');
    await sleep(50);
    const middle = new Date().toISOString();
    await sleep(50);
    await pushMany(app.api, 'ps.back', 'a', 2, 'new');
    await ackAll(app.api, await popQueue(app.api, 'ps.back', { consumerGroup: 'rewinder', batch: 10 }));
    const res = await app.api.post(url('rewinder', 'ps.back', 'a'), { timestamp: middle });
    expect(res.body.cursorMovedTo).toBe(2);
    expect(
      (await popQueue(app.api, 'ps.back', { consumerGroup: 'rewinder', batch: 10 })).body.messages.map(
        (m: any) => m.transactionId,
      ),
    ).toEqual(['new-0', 'new-1']);
  });

  it('404 for an unknown queue or partition, 400 for a bad body, and nothing written', async () => {
    await pushMany(app.api, 'ps.bad', 'a', 1, 'a');
    const before = await app.db.query<any>(`select count(*)::int as n from queen.audit_log`);
    for (const [queue, partition] of [
      ['ps.bad', 'nope'],
      ['nope', 'a'],
    ]) {
      const res = await app.api.post(url('g', queue, partition), { toEnd: true });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'Partition not found' });
    }
    for (const [body, field] of [
      [{ toEnd: false }, 'toEnd'],
      [{ timestamp: 'yesterday' }, 'timestamp'],
      [{ toEnd: true, reason: 'x'.repeat(501) }, 'reason'],
    ] as const) {
      const res = await app.api.post(url('g', 'ps.bad', 'a'), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}|^body`));
    }
    expect((await app.api.post(url('g', 'ps.bad', 'x'.repeat(600)), { toEnd: true })).status).toBe(400);
    expect(await app.db.query<any>(`select count(*)::int as n from queen.audit_log`)).toEqual(before);
  });
});
