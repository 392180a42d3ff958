// Everything at once on one queue: pushes, pops and acks (failures too) from several groups, groups
// joining while they run, seeks, subscription moves and pauses. No request may fail on a deadlock
// or a lock wait (a deadlock shows as a 500, or as a pop's error 204), and the counters must agree
// with the rows they sum when the dust settles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, sleep } from './support/broker';

const QUEUE = 'busy.q';
const SECONDS = 8;

describe('contention', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ DB_POOL_SIZE: '30' });
    await app.api.post('/api/v1/configure', { queue: QUEUE, options: { retryDelay: 0, retryLimit: 2 } });
  });
  afterAll(() => app.stop());

  it('no deadlock, no error, counters equal to what they sum', async () => {
    const deadline = Date.now() + SECONDS * 1000;
    const problems: string[] = [];
    const check = (what: string, status: number, empty?: string | null) => {
      if (status >= 500 || empty === 'error') problems.push(`${what}: ${status} ${empty ?? ''}`);
    };
    let seq = 0;

    const pusher = async () => {
      while (Date.now() < deadline) {
        const items = Array.from({ length: 20 }, () => ({
          queue: QUEUE,
          partition: `p${seq % 12}`,
          payload: { seq: seq++ },
        }));
        check('push', (await app.api.push(items)).status);
      }
    };
    const consumer = async (group: string) => {
      while (Date.now() < deadline) {
        const r = await popQueue(app.api, QUEUE, { consumerGroup: group, batch: 5, partitions: 2 });
        check(`pop ${group}`, r.status, r.empty);
        if (r.status !== 200) {
          await sleep(10);
          continue;
        }
        const res = await app.api.post('/api/v1/ack/batch', {
          consumerGroup: group,
          acknowledgments: r.body.messages.map((m: any, i: number) => ({
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            leaseId: m.leaseId,
            status: i === 0 && seq % 7 === 0 ? 'failed' : 'completed',
          })),
        });
        check(`ack ${group}`, res.status);
      }
    };
    const operator = async () => {
      let n = 0;
      while (Date.now() < deadline) {
        n++;
        // a new group joins while everything runs
        check(
          'join',
          (await popQueue(app.api, QUEUE, { consumerGroup: `late-${n}`, subscriptionMode: n % 2 ? 'new' : 'all' }))
            .status,
        );
        check(
          'seek',
          (
            await app.api.post(`/api/v1/consumer-groups/g${n % 3}/queues/${QUEUE}/seek`, {
              toEnd: true,
              reason: 'test',
            })
          ).status,
        );
        check(
          'subscription',
          (
            await app.api.post(`/api/v1/consumer-groups/late-${n}/subscription`, {
              queue: QUEUE,
              subscriptionMode: 'new',
            })
          ).status,
        );
        const [p] = await app.db.query<{ id: string }>(
          `select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 limit 1`,
          [QUEUE],
        );
        if (p) {
          check(
            'pause',
            (await app.api.post(`/api/v1/cursors/${p.id}/g1/pause`, { paused: true, reason: 'test' })).status,
          );
          check(
            'resume',
            (await app.api.post(`/api/v1/cursors/${p.id}/g1/pause`, { paused: false, reason: 'test' })).status,
          );
        }
        await sleep(100);
      }
    };

    await Promise.all([pusher(), pusher(), consumer('g0'), consumer('g1'), consumer('g2'), consumer('g2'), operator()]);
    expect(problems).toEqual([]);

    const [counters] = await app.db.query(
      `
      select (select sum(messages)::int from queen.queue_stats s where s.queue_id = q.id) as messages,
             (select sum(head_offset)::int from queen.partitions p where p.queue_id = q.id) as heads,
             (select count(*)::int from queen.queue_groups g
              where g.queue_id = q.id
                and (select coalesce(sum(s.committed), 0) from queen.group_stats s where s.queue_id = q.id and s.consumer_group = g.consumer_group)
                 <> (select coalesce(sum(c.committed_offset), 0) from queen.cursors c where c.queue_id = q.id and c.consumer_group = g.consumer_group)) as groups_off
      from queen.queues q where q.name = $1`,
      [QUEUE],
    );
    expect(counters.messages).toBe(counters.heads);
    expect(counters.groups_off).toBe(0);
    // every pending (partition, group) is in the backlog
    const [missing] = await app.db.query<{ n: number }>(
      `
      select count(*)::int as n from queen.cursors c join queen.partitions p on p.id = c.partition_id
      where c.queue_id = (select id from queen.queues where name = $1) and p.head_offset > c.committed_offset
        and not exists (select 1 from queen.backlog b where b.partition_id = c.partition_id and b.consumer_group = c.consumer_group)`,
      [QUEUE],
    );
    expect(missing.n).toBe(0);
  }, 60_000);
});
