// A broker that has lived (issue 17): the database is made old in SQL (segment timestamps moved
// back) and the lifecycle job is called directly, instead of waiting. Groups that join a trimmed
// queue, queue mode first used late, seeks into a trimmed range, deletes, dead letters read the
// next morning, slow consumers under retention, retried pushes after removal, and the job's cost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany } from './support/broker';

describe('a database that has lived', () => {
  let app: TestApp;
  // the app's own job would run at its own moments; here the test runs it
  beforeAll(async () => {
    app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
  });
  afterAll(() => app.stop());

  const configure = (queue: string, options: Record<string, unknown>) =>
    app.api.post('/api/v1/configure', { queue, options });
  const partitionOf = async (queue: string, partition = 'p') =>
    (
      await app.db.query<{ id: string }>(
        'select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2',
        [queue, partition],
      )
    )[0].id;
  /** Makes everything stored in the queue `seconds` older, and its partitions due. */
  const age = async (queue: string, seconds: number) => {
    await app.db.query(
      `update queen.segments s set created_at = s.created_at - make_interval(secs => $2)
       from queen.partitions p join queen.queues q on q.id = p.queue_id where s.partition_id = p.id and q.name = $1`,
      [queue, seconds],
    );
    await app.db.query(
      `update queen.partitions p set retain_check_at = now() from queen.queues q where q.id = p.queue_id and q.name = $1`,
      [queue],
    );
  };
  const runJob = async () =>
    (await app.db.query<{ p_summary: any }>('call queen.run_lifecycle(10000, 90, 30, $1, 1000, null)', ['test']))[0]
      .p_summary;
  const stored = async (queue: string) =>
    (
      await app.db.query<{ n: number }>(
        `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = $1`,
        [queue],
      )
    )[0].n;
  const lagOf = async (queue: string, group: string) =>
    (await app.api.get('/api/v1/consumer-groups')).body.find((g: any) => g.queueName === queue && g.name === group)
      ?.totalLag;
  /** Pops and acks as `group` until the queue gives nothing; answers the payload seqs in order. */
  const drain = async (queue: string, params: Record<string, string | number | boolean>) => {
    const seqs: number[] = [];
    for (let i = 0; i < 50; i++) {
      const reply = await popQueue(app.api, queue, params);
      if (reply.status === 204) return seqs;
      seqs.push(...reply.body.messages.map((m: any) => m.data.seq));
      const acks = await ackAll(app.api, reply);
      expect(acks.every((a: any) => a.status === 'completed' || a.success !== false)).toBe(true);
    }
    throw new Error('never drained');
  };

  it('a group that joins a queue trimmed hours ago gets what is stored, its acks release its lease, its lag falls to 0', async () => {
    await configure('aged.join', { completedRetentionSeconds: 60 });
    await pushMany(app.api, 'aged.join', 'p', 20, 'j');
    expect(await drain('aged.join', { consumerGroup: 'a', batch: 20 })).toHaveLength(20);
    await age('aged.join', 3 * 3600);
    await runJob();
    expect(await stored('aged.join')).toBe(0);
    await pushMany(app.api, 'aged.join', 'p', 5, 'j', 20);
    const first = await popQueue(app.api, 'aged.join', { consumerGroup: 'b', batch: 10 });
    expect(first.status).toBe(200);
    expect(first.body.messages.map((m: any) => m.data.seq)).toEqual([20, 21, 22, 23, 24]);
    const acks = await ackAll(app.api, first);
    expect(acks.at(-1)).toMatchObject({ leaseReleased: true });
    expect(await lagOf('aged.join', 'b')).toBe(0);
    const [c] = await app.db.query<any>(
      `select committed_offset::int as committed, lease_id from queen.cursors where partition_id = $1 and consumer_group = 'b'`,
      [await partitionOf('aged.join')],
    );
    expect(c).toEqual({ committed: 25, lease_id: null });
  });

  it('queue mode used for the first time on a trimmed queue starts at what is stored', async () => {
    await configure('aged.qmode', { completedRetentionSeconds: 60 });
    await pushMany(app.api, 'aged.qmode', 'p', 12, 'q');
    await drain('aged.qmode', { consumerGroup: 'a', batch: 5 });
    await age('aged.qmode', 7200);
    await runJob();
    await pushMany(app.api, 'aged.qmode', 'p', 3, 'q', 12);
    expect(await drain('aged.qmode', { batch: 2 })).toEqual([12, 13, 14]);
    expect(await lagOf('aged.qmode', '__QUEUE_MODE__')).toBe(0);
  });

  it('a seek into a partly trimmed segment lands on the first stored message, and its preview counts messages', async () => {
    await configure('aged.seek', { retentionEnabled: true, retentionSeconds: 3600, ttl: 0 });
    await pushMany(app.api, 'aged.seek', 'p', 10, 's');
    const pid = await partitionOf('aged.seek');
    // a slow consumer's lease kept offsets 6-10 while retention removed 1-5 of the same segment
    await app.db.query(`delete from queen.messages where partition_id = $1 and "offset" <= 5`, [pid]);
    const before = new Date(Date.now() - 86_400_000).toISOString();
    const [p] = await app.db.query<any>(
      `select target::int, skipped::int, replayed::int from queen.seek_preview('late', 'aged.seek', 'p', false, $1)`,
      [before],
    );
    expect(p).toEqual({ target: 5, skipped: 0, replayed: 0 });
    // a group that consumed everything, previewing a seek back to the start: 5 stored messages replayed, not 10
    await drain('aged.seek', { consumerGroup: 'done', batch: 10 });
    const [back] = await app.db.query<any>(
      `select replayed::int from queen.seek_preview('done', 'aged.seek', 'p', false, $1)`,
      [before],
    );
    expect(back.replayed).toBe(5);
    expect(
      (
        await app.api.post('/api/v1/consumer-groups/done/queues/aged.seek/seek', {
          timestamp: before,
          reason: 'replay',
        })
      ).status,
    ).toBe(200);
    expect(await drain('aged.seek', { consumerGroup: 'done', batch: 3 })).toEqual([5, 6, 7, 8, 9]);
    expect(await lagOf('aged.seek', 'done')).toBe(0);
  });

  it('a deleted message is passed over by groups that existed then and by groups that join later', async () => {
    await pushMany(app.api, 'aged.delete', 'p', 5, 'd');
    expect(await drain('aged.delete', { consumerGroup: 'early', batch: 1 })).toHaveLength(5);
    const pid = await partitionOf('aged.delete');
    expect((await app.api.del(`/api/v1/messages/${pid}/d-2?reason=poison`)).status).toBe(200);
    expect(await drain('aged.delete', { consumerGroup: 'late', batch: 2 })).toEqual([0, 1, 3, 4]);
    const [c] = await app.db.query<any>(
      `select committed_offset::int as committed, acked_offsets from queen.cursors where partition_id = $1 and consumer_group = 'late'`,
      [pid],
    );
    expect(c).toEqual({ committed: 5, acked_offsets: [] });
    expect(await lagOf('aged.delete', 'late')).toBe(0);
  });

  it('a dead letter outlives its message under ttl, with its payload, and can be requeued the next morning', async () => {
    await configure('aged.dlq', { ttl: 3600, retryLimit: 0, retryDelay: 0 });
    await pushMany(app.api, 'aged.dlq', 'p', 2, 'x');
    const reply = await popQueue(app.api, 'aged.dlq', { consumerGroup: 'g', batch: 1 });
    await ackAll(app.api, reply, 'failed', 'poison');
    await drain('aged.dlq', { consumerGroup: 'g', batch: 5 });
    await age('aged.dlq', 8 * 3600);
    await runJob();
    expect(await stored('aged.dlq')).toBe(0);
    const list = (await app.api.get('/api/v1/dlq?queue=aged.dlq')).body;
    expect(list.pagination.total).toBe(1);
    expect(list.messages[0]).toMatchObject({ transactionId: 'x-0', data: { seq: 0 }, errorMessage: 'poison' });
    const requeued = await app.api.post('/api/v1/dlq/requeue', {
      items: [{ partitionId: list.messages[0].partitionId, consumerGroup: 'g', offset: list.messages[0].offset }],
      reason: 'fixed',
    });
    expect(requeued.body.requeued).toBe(1);
    expect(await drain('aged.dlq', { consumerGroup: 'g', batch: 5 })).toEqual([0]);
  });

  it('a slow consumer under retentionSeconds and maxWaitTimeSeconds pins only its lease span; the rest goes and counts as evicted', async () => {
    for (const [queue, options] of [
      ['aged.slow', { retentionEnabled: true, retentionSeconds: 3, ttl: 0 }],
      ['aged.wait', { maxWaitTimeSeconds: 3, ttl: 0 }],
    ] as const) {
      await configure(queue, options);
      await pushMany(app.api, queue, 'p', 10, 'w');
      const held = await popQueue(app.api, queue, { consumerGroup: 'slow', batch: 2, leaseSeconds: 3600 });
      expect(held.body.messages).toHaveLength(2);
      await pushMany(app.api, queue, 'p', 30, 'w', 10);
      await age(queue, 60);
      await runJob();
      expect(await stored(queue)).toBe(2); // the live lease's span: offsets 1-2
      await ackAll(app.api, held);
      const pid = await partitionOf(queue);
      const [c] = await app.db.query<any>(
        `select committed_offset::int as committed, evicted::int, lease_id from queen.cursors where partition_id = $1 and consumer_group = 'slow'`,
        [pid],
      );
      expect(c).toEqual({ committed: 40, evicted: 38, lease_id: null });
      expect(await lagOf(queue, 'slow')).toBe(0);
      await pushMany(app.api, queue, 'p', 1, 'w', 40);
      expect(await drain(queue, { consumerGroup: 'slow', batch: 5 })).toEqual([40]);
    }
  });

  it('a push retried after its message was removed is a duplicate for the dedup window', async () => {
    await configure('aged.dedup', { completedRetentionSeconds: 60 });
    await pushMany(app.api, 'aged.dedup', 'p', 3, 't');
    await drain('aged.dedup', { consumerGroup: 'g', batch: 3 });
    await app.db.query(`update queen.segments s set created_at = now() - interval '1 hour'
      from queen.partitions p join queen.queues q on q.id = p.queue_id where s.partition_id = p.id and q.name = 'aged.dedup'`);
    await app.db.query(
      `update queen.partitions p set retain_check_at = now() from queen.queues q where q.id = p.queue_id and q.name = 'aged.dedup'`,
    );
    await runJob();
    expect(await stored('aged.dedup')).toBe(0);
    const retried = await app.api.push([
      { queue: 'aged.dedup', partition: 'p', payload: { seq: 1 }, transactionId: 't-1' },
    ]);
    expect(retried.body[0]).toMatchObject({ status: 'duplicate' });
    expect((await popQueue(app.api, 'aged.dedup', { consumerGroup: 'g' })).status).toBe(204);
    // past the window (2 h from the push) the id is forgotten by the next run
    await app.db.query(
      `update queen.removed_transactions set forget_at = now() - interval '1 second' where transaction_id like 't-%'`,
    );
    const summary = await runJob();
    expect(summary.transactionIdsForgotten).toBeGreaterThanOrEqual(3);
    const later = await app.api.push([
      { queue: 'aged.dedup', partition: 'p', payload: { seq: 1 }, transactionId: 't-1' },
    ]);
    expect(later.body[0]).toMatchObject({ status: 'queued' });
  });

  it('a run visits only what is due: a partition waiting on a lagging group backs off; nothing due visits nothing', async () => {
    await configure('aged.lagging', { ttl: 60 });
    await pushMany(app.api, 'aged.lagging', 'p', 3, 'l');
    await popQueue(app.api, 'aged.lagging', { consumerGroup: 'behind', batch: 1, autoAck: true });
    await age('aged.lagging', 3600);
    const pid = await partitionOf('aged.lagging');
    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      await app.db.query('update queen.partitions set retain_check_at = now() where id = $1', [pid]);
      await runJob();
      const [p] = await app.db.query<any>(
        'select extract(epoch from retain_check_at - now())::float8 as gap, retain_misses from queen.partitions where id = $1',
        [pid],
      );
      gaps.push(p.gap);
    }
    // removed offset 1 on the first run; then nothing: the next look recedes, doubling
    expect(gaps[2]).toBeGreaterThan(gaps[1] * 1.5);
    expect(gaps[3]).toBeGreaterThan(gaps[2] * 1.5);
    await app.db.query(
      `update queen.partitions set retain_check_at = now() + interval '1 hour' where retain_check_at <= now()`,
    );
    const idle = await runJob();
    expect(idle.partitionsVisited).toBe(0);
  });

  it('removal metrics: the job reports what each option removed', async () => {
    await configure('aged.metrics', { completedRetentionSeconds: 60 });
    await pushMany(app.api, 'aged.metrics', 'p', 4, 'm');
    await drain('aged.metrics', { consumerGroup: 'g', batch: 4 });
    await age('aged.metrics', 3600);
    const summary = await runJob();
    expect(summary.removedByOption).toMatchObject({ completedRetentionSeconds: expect.any(Number) });
    expect(summary.removedByOption.completedRetentionSeconds).toBeGreaterThanOrEqual(4);
  });
});
