// What the model checker (tests/model.test.ts, npm run test:model) found, each shrunk to a
// deterministic repro named by the behaviour it holds, with the seed and steps it came from.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '200' });
});
afterAll(() => app?.stop());

const stored = async (queue: string) =>
  (
    await app.db.query<{ n: number }>(
      `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
    join queen.queues q on q.id = p.queue_id where q.name = $1`,
      [queue],
    )
  )[0].n;

/** Waits until `read` answers what `done` accepts, or fails with what it last answered. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 8000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await sleep(100);
    v = await read();
  }
  expect(done(v), JSON.stringify(v)).toBe(true);
  return v;
}

describe('model checker findings', () => {
  // seed 1701, 20 s, on main 4786343: "dead letter gone" x11 (queues m1701.done with
  // completedRetentionSeconds 2 and m1701.retain with retentionSeconds 3): a message failed past
  // retryLimit, the job removed the message, and GET /api/v1/dlq no longer listed its dead letter
  // although the dead_letters row (with its copy of the payload) was still there.
  it('a dead letter stays listed, with its payload, after the job removed its message', async () => {
    const queue = 'finding.dlq-after-ttl';
    await app.api.post('/api/v1/configure', {
      queue,
      options: { completedRetentionSeconds: 1, retryLimit: 0, retryDelay: 0 },
    });
    await pushMany(app.api, queue, 'p', 2, 'dead');
    const reply = await popQueue(app.api, queue, { consumerGroup: 'g', batch: 2 });
    expect(reply.status).toBe(200);
    const acks = await ackAll(app.api, reply, 'failed', 'boom');
    expect(acks.map((a) => a.dlq)).toEqual([true, true]);
    const listed = async () => (await app.api.get(`/api/v1/dlq?queue=${queue}&consumerGroup=g`)).body;
    expect((await listed()).pagination.total).toBe(2);
    await until(
      () => stored(queue),
      (n) => n === 0,
    ); // both dead letters count as done: the job removes the messages
    const after = await listed();
    expect(after.pagination.total).toBe(2);
    expect(after.messages.map((d: any) => d.data).sort((a: any, b: any) => a.seq - b.seq)).toEqual([
      { seq: 0 },
      { seq: 1 },
    ]);
    expect(after.messages.map((d: any) => d.transactionId).sort()).toEqual(['dead-0', 'dead-1']);
  });

  // seed 7, 15 s, on main 4786343 (merged at 206667c): "stored past the retention bound" x17 on
  // m7.wait and m7.retain: messages of age (maxWaitTimeSeconds 3, retentionSeconds 3) outside every
  // live lease for 4 s and more, while the job's summaries counted skipped partitions at nearly
  // every run. Shrunk by hand: one partition, six groups popping and acking batch=1 in a loop and a
  // producer every 5 ms, retentionSeconds 1: the job skipped the partition in 11 of 12 runs and the
  // oldest stored message outside any lease grew to 7.6 s (retention + lease + two intervals: 5 s).
  // The job skipped a partition when any of its cursors was locked (a pop or an ack in flight), so a
  // busy partition was never trimmed. Deterministic form: a pop's or an ack's lock on one group's
  // cursor, held for 150 ms while the job comes to the partition.
  it('retentionSeconds removes what is due although a pop or an ack holds one of the cursors when the job comes', async () => {
    const queue = 'finding.busy-partition';
    await app.api.post('/api/v1/configure', { queue, options: { retentionEnabled: true, retentionSeconds: 1 } });
    await pushMany(app.api, queue, 'p', 3, 'busy');
    await ackAll(app.api, await popQueue(app.api, queue, { consumerGroup: 'g', batch: 3 }));
    await app.db.query(
      `update queen.segments s set created_at = s.created_at - interval '1 minute'
      from queen.partitions p join queen.queues q on q.id = p.queue_id where s.partition_id = p.id and q.name = $1`,
      [queue],
    );
    await app.db.query(
      `update queen.partitions p set retain_check_at = now() from queen.queues q where q.id = p.queue_id and q.name = $1`,
      [queue],
    );
    const busy = new pg.Client({ connectionString: app.db.url });
    await busy.connect();
    try {
      await busy.query('begin');
      await busy.query(
        `select 1 from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1 and c.consumer_group = 'g' for update`,
        [queue],
      );
      const job = app.db.query('call queen.run_lifecycle(10000, 90, 30, $1, 1000, null)', ['test']);
      await new Promise((r) => setTimeout(r, 150));
      await busy.query('rollback');
      await job;
      expect(await stored(queue)).toBe(0);
    } finally {
      await busy.query('rollback').catch(() => {});
      await busy.end();
    }
  });

  // Found while extending the model to dead-letter requeues (reading queen.requeue_dead_letters
  // beside the dedup window of 16177bd): a requeued copy is named `<tx>.requeue-<n>` with the first
  // n that no *stored* message has, but queen.push() also refuses ids the dedup window remembers
  // (queen.removed_transactions). The same message dead in two groups, requeued for one, that copy
  // consumed and removed, then requeued for the other: the copy gets the remembered id, the push
  // calls it a duplicate, the dead letter is gone and nothing was requeued. Fixed on branch model
  // (sql/functions/dead_letters.sql: the first n neither stored nor remembered).
  it('a dead letter requeued after an earlier copy of its message was removed is delivered again', async () => {
    const queue = 'finding.requeue-twice';
    await app.api.post('/api/v1/configure', {
      queue,
      options: { completedRetentionSeconds: 1, retryLimit: 0, retryDelay: 0 },
    });
    await pushMany(app.api, queue, 'p', 1, 'twice');
    for (const group of ['g1', 'g2']) {
      const acks = await ackAll(
        app.api,
        await popQueue(app.api, queue, { consumerGroup: group, batch: 1 }),
        'failed',
        'boom',
      );
      expect(acks[0].dlq).toBe(true);
    }
    const dead = (await app.api.get(`/api/v1/dlq?queue=${queue}`)).body.messages as any[];
    expect(dead).toHaveLength(2);
    const requeue = async (group: string) => {
      const d = dead.find((x) => x.consumerGroup === group);
      const res = await app.api.post('/api/v1/dlq/requeue', {
        items: [{ partitionId: d.partitionId, consumerGroup: group, offset: d.offset }],
        reason: 'model finding',
      });
      expect(res.status).toBe(200);
      return res.body.results[0];
    };
    const first = await requeue('g1');
    expect(first).toMatchObject({ success: true, newTransactionId: 'twice-0.requeue-1' });
    const reply1 = await popQueue(app.api, queue, { consumerGroup: 'g1', batch: 5 });
    expect(reply1.body.messages.map((m: any) => m.transactionId)).toEqual(['twice-0.requeue-1']);
    await ackAll(app.api, reply1);
    // g1's retry is not g2's (issue 34): counted done for it
    expect((await popQueue(app.api, queue, { consumerGroup: 'g2', batch: 5 })).status).toBe(204);
    await until(
      () => stored(queue),
      (n) => n === 0,
    ); // the original and the copy: done for both groups
    const second = await requeue('g2');
    expect(second.success).toBe(true);
    expect(second.newOffset).not.toBeNull();
    const reply = await popQueue(app.api, queue, { consumerGroup: 'g2', batch: 5 });
    expect(reply.status).toBe(200);
    expect(reply.body.messages[0].data).toEqual({ seq: 0 });
  });
});
