// Issue 30, item 4: every counter and figure equals a recount from the tables. Offsets a cursor
// passes because their message is gone (removed by the lifecycle job past a live lease, deleted one
// by one) are evicted, never acked: the acked counters (Prometheus, the holder's minutes) count
// the messages an ack or an auto-ack completed, so acked <= delivered. /resources/queues and
// /resources/overview count the messages stored, and queue mode's pending among them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany } from './support/broker';
import { parsePrometheus, valueOf } from './support/prometheus';

let app: TestApp;
// the job runs when the test says (queen.run_lifecycle, called below)
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
});
afterAll(() => app.stop());

const configure = (queue: string, options: Record<string, unknown>) =>
  app.api.post('/api/v1/configure', { queue, options });
/** Makes everything stored in the queue a minute older and its partitions due, then runs the job once. */
async function ageAndRun(queue: string) {
  await app.db.query(
    `update queen.segments s set created_at = s.created_at - interval '60 seconds'
     from queen.partitions p join queen.queues q on q.id = p.queue_id where s.partition_id = p.id and q.name = $1`,
    [queue],
  );
  await app.db.query(
    `update queen.partitions p set retain_check_at = now() from queen.queues q where q.id = p.queue_id and q.name = $1`,
    [queue],
  );
  await app.db.query('call queen.run_lifecycle(10000, 90, 30, $1, 1000, null)', ['test']);
}
const stored = async (queue: string) =>
  (
    await app.db.query<{ n: number }>(
      `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = $1`,
      [queue],
    )
  )[0].n;
async function scraped(queue: string, group: string) {
  const res = await fetch(`${app.server.url}/metrics/prometheus`);
  const families = parsePrometheus(await res.text());
  const l = { queue, consumer_group: group };
  return {
    delivered: valueOf(families, 'queen_messages_delivered_total', l),
    acked: valueOf(families, 'queen_messages_acked_total', l),
  };
}
/** The group's cursors, recounted: what they delivered, and what they passed split by how. */
async function recount(queue: string, group: string) {
  return (
    await app.db.query<{ delivered: number; done: number; evicted: number; dead: number; acked: number }>(
      `select sum(c.deliveries)::int as delivered,
              sum(c.committed_offset + cardinality(c.acked_offsets))::int as done,
              sum(c.evicted)::int as evicted, sum(c.dead_letters)::int as dead,
              sum(c.committed_offset + cardinality(c.acked_offsets) - c.evicted - c.dead_letters)::int as acked
       from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1 and c.consumer_group = $2`,
      [queue, group],
    )
  )[0];
}

describe('acked counts what was acked', () => {
  it('retention removes m2..m10 past a live lease; the holder acks m1: delivered 1, acked 1, evicted 9', async () => {
    await configure('rc.held', { retentionEnabled: true, retentionSeconds: 1, ttl: 0 });
    await pushMany(app.api, 'rc.held', 'p', 10, 'h');
    const held = await popQueue(app.api, 'rc.held', { consumerGroup: 'g', batch: 1, leaseSeconds: 300 });
    expect(held.body.messages).toHaveLength(1);
    await ageAndRun('rc.held');
    expect(await stored('rc.held')).toBe(1); // the live lease's span stays
    const [ack] = await ackAll(app.api, held);
    expect(ack).toMatchObject({ leaseReleased: true });

    const counted = await recount('rc.held', 'g');
    expect(counted).toEqual({ delivered: 1, done: 10, evicted: 9, dead: 0, acked: 1 });
    expect(await scraped('rc.held', 'g')).toEqual({ delivered: 1, acked: 1 });
    const [holder] = await app.db.query<{ acked: number }>(
      `select coalesce(sum(h.acked), 0)::int as acked from queen.holder_stats h
       where h.holder = (select d.holder from queen.deliveries d where d.lease_id = $1)`,
      [held.body.messages[0].leaseId],
    );
    expect(holder.acked).toBe(1);
  });

  it('an auto-ack that passes a deleted message counts it evicted, not acked', async () => {
    await pushMany(app.api, 'rc.auto', 'p', 3, 'a');
    const [{ id }] = await app.db.query<{ id: string }>(
      `select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'rc.auto'`,
    );
    const first = await popQueue(app.api, 'rc.auto', { consumerGroup: 'auto', batch: 1, autoAck: true });
    expect(first.body.messages.map((m: any) => m.transactionId)).toEqual(['a-0']);
    await app.db.query(`select queen.delete_message($1, 'a-2', 'test', 'test')`, [id]);
    const second = await popQueue(app.api, 'rc.auto', { consumerGroup: 'auto', batch: 1, autoAck: true });
    expect(second.body.messages.map((m: any) => m.transactionId)).toEqual(['a-1']);
    // the second auto-ack passed the deleted m3
    expect(await recount('rc.auto', 'auto')).toEqual({ delivered: 2, done: 3, evicted: 1, dead: 0, acked: 2 });
    expect(await scraped('rc.auto', 'auto')).toEqual({ delivered: 2, acked: 2 });
  });
});

describe('/resources count the messages stored', () => {
  /** Queue mode's pending, recounted: stored, not done by its cursor, not inside its live lease. */
  const pendingRecount = async (queue: string) =>
    (
      await app.db.query<{ n: number }>(
        `select count(*)::int as n
         from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
         left join queen.cursors c on c.partition_id = p.id and c.consumer_group = '__QUEUE_MODE__'
         where q.name = $1
           and m."offset" > coalesce(c.committed_offset, 0) and not coalesce(m."offset" = any (c.acked_offsets), false)
           and not coalesce(c.lease_expires_at > now() and m."offset" <= c.lease_end_offset, false)`,
        [queue],
      )
    )[0].n;
  const listed = async (queue: string) =>
    (await app.api.get('/api/v1/resources/queues')).body.queues.find((q: any) => q.name === queue).messages;

  it('10 pushed and removed, 5 pushed since: total 5, pending 5 (not 15 and 15)', async () => {
    await configure('rc.stored', { retentionEnabled: true, retentionSeconds: 1, ttl: 0 });
    await pushMany(app.api, 'rc.stored', 'p', 10, 's');
    await ageAndRun('rc.stored');
    expect(await stored('rc.stored')).toBe(0);
    await pushMany(app.api, 'rc.stored', 'p', 5, 's', 10);
    expect(await listed('rc.stored')).toEqual({ total: 5, pending: 5, processing: 0 });
    expect(await pendingRecount('rc.stored')).toBe(5);
  });

  it('queue mode consumed some and lost the rest to retention: pending counts what is stored', async () => {
    await configure('rc.qm', { retentionEnabled: true, retentionSeconds: 1, ttl: 0 });
    await pushMany(app.api, 'rc.qm', 'p', 10, 'q');
    await popQueue(app.api, 'rc.qm', { batch: 4, autoAck: true });
    await ageAndRun('rc.qm');
    await pushMany(app.api, 'rc.qm', 'p', 5, 'q', 10);
    const leased = await popQueue(app.api, 'rc.qm', { batch: 2 });
    expect(leased.body.messages).toHaveLength(2);
    expect(await listed('rc.qm')).toEqual({ total: 5, pending: 3, processing: 2 });
    expect(await pendingRecount('rc.qm')).toBe(3);
  });

  it('overview and every queue agree with a recount over the whole database', async () => {
    const queues = (await app.api.get('/api/v1/resources/queues')).body.queues;
    const overview = (await app.api.get('/api/v1/resources/overview')).body;
    const [all] = await app.db.query<{ n: number }>('select count(*)::int as n from queen.messages');
    expect(overview.messages.total).toBe(all.n);
    expect(queues.reduce((n: number, q: any) => n + q.messages.total, 0)).toBe(all.n);
    for (const q of queues) {
      expect(q.messages.total, q.name).toBe(await stored(q.name));
      expect(q.messages.pending, q.name).toBe(await pendingRecount(q.name));
    }
    expect(overview.messages.pending).toBe(queues.reduce((n: number, q: any) => n + q.messages.pending, 0));
  });
});
