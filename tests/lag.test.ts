// Pending and lag are the same, correct figures everywhere: the Overview, the consumer-group routes
// and the queue page, checked against counts taken from the messages themselves. A partition a
// group never claimed counts from the group's seed; a queue nobody consumes is all pending.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany } from './support/broker';

describe('lag and pending', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  /** Messages of the queue not yet consumed by the group, counted from the messages and the offsets acked. */
  const behind = async (queue: string, group: string) =>
    (
      await app.db.query<{ n: number }>(
        `
      select count(*)::int as n
      from queen.messages m
      join queen.partitions p on p.id = m.partition_id
      join queen.queues q on q.id = p.queue_id
      left join queen.cursors c on c.partition_id = p.id and c.consumer_group = $2
      where q.name = $1 and m."offset" > coalesce(c.committed_offset, 0)`,
        [queue, group],
      )
    )[0].n;

  async function figures(queue: string, group: string) {
    const overview = (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === queue);
    const list = (await app.api.get('/api/v1/consumer-groups')).body.find(
      (g: any) => g.name === group && g.queueName === queue,
    );
    const detail = (await app.api.get(`/api/v1/consumer-groups/${group}`)).body.queues.find(
      (q: any) => q.queueName === queue,
    );
    const page = (await app.api.get(`/api/dashboard/queues/${queue}?group=${group}&pageSize=500&sort=partition`)).body;
    return {
      overviewPending: overview.pending,
      listLag: list.totalLag,
      listPartitions: list.partitions,
      detailLag: detail.totalLag,
      detailRows: detail.partitions.reduce((n: number, p: any) => n + p.lag, 0),
      detailPartitions: detail.partitions.length,
      pageRows: page.rows.reduce((n: number, r: any) => n + r.lag, 0),
      pagePartitions: page.total,
    };
  }

  it('a group that popped 3 of 10 partitions lags by every message it has not consumed, on every page', async () => {
    for (let p = 0; p < 10; p++) await pushMany(app.api, 'lag.q', `p${p}`, p + 1);
    const r = await popQueue(app.api, 'lag.q', { consumerGroup: 'partial', partitions: 3, batch: 1000 });
    expect(r.body.partitionsClaimed).toBe(3);
    await ackAll(app.api, r);

    const expected = await behind('lag.q', 'partial');
    expect(expected).toBe(55 - r.body.messages.length); // 1 + 2 + ... + 10 pushed
    const f = await figures('lag.q', 'partial');
    expect(f).toEqual({
      overviewPending: expected,
      listLag: expected,
      listPartitions: 10,
      detailLag: expected,
      detailRows: expected,
      detailPartitions: 10,
      pageRows: expected,
      pagePartitions: 10,
    });
  });

  it('a `new` group lags only by what was pushed after it subscribed; the overview shows the largest lag', async () => {
    await popQueue(app.api, 'lag.q', { consumerGroup: 'newbie', subscriptionMode: 'new' });
    for (let p = 0; p < 4; p++) await pushMany(app.api, 'lag.q', `p${p}`, 2, `late-p${p}`);
    const newbie = await figures('lag.q', 'newbie');
    expect(await behind('lag.q', 'newbie')).toBe(8);
    expect({ ...newbie, overviewPending: undefined }).toEqual({
      overviewPending: undefined,
      listLag: 8,
      listPartitions: 10,
      detailLag: 8,
      detailRows: 8,
      detailPartitions: 10,
      pageRows: 8,
      pagePartitions: 10,
    });
    const partial = await behind('lag.q', 'partial');
    expect(newbie.overviewPending).toBe(Math.max(partial, 8));
    expect((await figures('lag.q', 'partial')).listLag).toBe(partial);
  });

  it('a queue without any consumer: every message is pending, and the overview says nobody consumes it', async () => {
    for (let p = 0; p < 5; p++) await pushMany(app.api, 'lag.none', `p${p}`, 100);
    const overview = (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'lag.none');
    expect(overview).toMatchObject({ messages: 500, pending: 500, groups: 0, partitions: 5 });
    expect(overview.problems.map((p: any) => p.text)).toContain('500 messages and no consumer group yet');
    const queues = (await app.api.get('/api/v1/resources/queues')).body.queues.find((q: any) => q.name === 'lag.none');
    expect(queues.messages).toEqual({ total: 500, pending: 500, processing: 0 });
  });
});
