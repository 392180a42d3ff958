// Rates and trends (sql/019, GET /api/v1/stats): samples of the cumulative counters, taken here at
// controlled timestamps by calling the sampling function directly, give per-second rates equal to
// what the test pushed, delivered, acked and failed between two samples; old samples are pruned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { PgDialect } from 'drizzle-orm/pg-core';
import { trendsStatement } from '@/lib/dashboard/trends';
import { ackAll, popQueue, pushMany } from './support/broker';

describe('rates and trends', () => {
  let app: TestApp;
  // the app samples once at start, then not again within the hour: the test's samples are the only ones
  beforeAll(async () => {
    app = await startApp({ STATS_SAMPLE_SECONDS: '3600' });
  });
  afterAll(() => app.stop());

  const dbNow = async () => (await app.db.query<{ t: Date }>('select now() as t'))[0].t;
  const sampleAt = async (at: Date) =>
    (
      await app.db.query<{ ok: boolean }>(`select queen.sample_stats(interval '0', interval '24 hours', $1) as ok`, [
        at,
      ])
    )[0].ok;
  const lagOf = async (queue: string, group: string) =>
    (
      await app.db.query<{ n: number }>(
        `
      select count(*)::int as n from queen.messages m
      join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
      left join queen.cursors c on c.partition_id = p.id and c.consumer_group = $2
      where q.name = $1 and m."offset" > coalesce(c.committed_offset, 0)
        and not (m."offset" = any(coalesce(c.acked_offsets, '{}')))`,
        [queue, group],
      )
    )[0].n;

  it('the rate between two samples is what was pushed, delivered, acked and failed between them, per second', async () => {
    const queue = 'stats.rates';
    await pushMany(app.api, queue, 'p0', 5, 'warm');
    await ackAll(app.api, await popQueue(app.api, queue, { consumerGroup: 'billing', batch: 5 }));
    // in the future, so that however slowly this test runs, its samples stay past the window's last bucket
    const first = new Date((await dbNow()).getTime() + 60_000);
    expect(await sampleAt(first)).toBe(true);

    await pushMany(app.api, queue, 'p0', 30);
    const popped = await popQueue(app.api, queue, { consumerGroup: 'billing', batch: 20 });
    expect(popped.body.messages).toHaveLength(20);
    const ack = (messages: any[], status: string) =>
      app.api.post('/api/v1/ack/batch', {
        consumerGroup: 'billing',
        acknowledgments: messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status,
          error: status === 'failed' ? 'boom' : null,
        })),
      });
    expect((await ack(popped.body.messages.slice(0, 12), 'completed')).status).toBe(200);
    expect((await ack(popped.body.messages.slice(12, 15), 'failed')).status).toBe(200);

    const second = new Date(first.getTime() + 10_000);
    expect(await sampleAt(second)).toBe(true);
    // a second call for the same instant writes nothing
    expect(
      await app.db.query(`select queen.sample_stats(interval '5 seconds', interval '24 hours', $1) as ok`, [second]),
    ).toEqual([{ ok: false }]);

    const res = await app.api.get(`/api/v1/stats?queue=${queue}&minutes=60`);
    expect(res.status).toBe(200);
    // the queue as a whole only: the chart shows one series, so it reads one
    expect(res.body.series.map((s: any) => s.group)).toEqual([null]);
    const lag = await lagOf(queue, 'billing');
    expect(lag).toBe(35 - 5 - 12);
    for (const s of [
      ...res.body.series,
      ...(await app.api.get(`/api/v1/stats?queue=${queue}&group=billing`)).body.series,
    ]) {
      const i = s.at.indexOf(second.getTime() / 1000);
      expect(i).toBeGreaterThanOrEqual(0);
      expect({
        pushed: s.pushed[i],
        delivered: s.delivered[i],
        acked: s.acked[i],
        failed: s.failed[i],
        lag: s.lag[i],
      }).toEqual({ pushed: 3, delivered: 2, acked: 1.2, failed: 0.3, lag });
    }
    const group = await app.api.get(`/api/v1/stats?queue=${queue}&group=billing`);
    expect(group.body.series).toHaveLength(1);
    expect(group.body.series[0].group).toBe('billing');

    // in buckets: a bucket's rate is its differences over its seconds
    await pushMany(app.api, queue, 'p0', 20, 'more');
    const third = new Date(second.getTime() + 5000);
    expect(await sampleAt(third)).toBe(true);
    const [raw] = (await app.api.get(`/api/v1/stats?queue=${queue}&group=billing`)).body.series;
    expect(raw.pushed.slice(-2)).toEqual([3, 4]);
    const [bucketed] = (await app.api.get(`/api/v1/stats?queue=${queue}&group=billing&points=1`)).body.series;
    // both samples lie past the one bucket of the window (they are in the future): one bucket of their own
    expect(bucketed.at).toEqual([third.getTime() / 1000]);
    expect(bucketed.pushed).toEqual([Math.round((50 / 15) * 1000) / 1000]);
    expect(bucketed.lag).toEqual([raw.lag.at(-1)]);

    // every queue as a whole, as the Overview's sparklines read it
    const all = await app.api.get('/api/v1/stats');
    const whole = all.body.series.find((s: any) => s.queue === queue);
    expect(whole.group).toBeNull();
    expect(whole.pushed.at(-1)).toBe(4);
    expect(all.body.series.every((s: any) => s.group === null)).toBe(true);
  });

  it('a counter that went down (a group deleted and re-created) counts 0, not a negative rate', async () => {
    const queue = 'stats.reset';
    await pushMany(app.api, queue, 'p0', 10);
    expect((await popQueue(app.api, queue, { consumerGroup: 'g', batch: 10 })).body.messages).toHaveLength(10);
    // in the future, so that however slowly this test runs, its samples stay past the window's last bucket
    const first = new Date((await dbNow()).getTime() + 60_000);
    await sampleAt(first);
    // what a sample before the group's deletion holds: more than the re-created group will
    await app.db.query(
      `update queen.stats_samples s set delivered = s.delivered + 100, acked = s.acked + 100, failed = s.failed + 100
                        from queen.queues q where q.id = s.queue_id and q.name = $1 and s.at = $2`,
      [queue, first],
    );
    await sampleAt(new Date(first.getTime() + 5000));
    const [series] = (await app.api.get(`/api/v1/stats?queue=${queue}&group=g`)).body.series;
    expect([series.delivered.at(-1), series.acked.at(-1), series.failed.at(-1)]).toEqual([0, 0, 0]);
  });

  it('prunes samples and holder minutes older than the retention', async () => {
    const now = await dbNow();
    await app.db.query(`
      insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag)
      select now() - interval '25 hours', q.id, '', 0, 0, 0, 0, 0 from queen.queues q limit 1`);
    await app.db.query(
      `insert into queen.holder_stats (minute, holder, backend, acked) values (date_trunc('minute', now() - interval '25 hours'), 'old-worker', 0, 1)`,
    );
    await app.db.query(
      `insert into queen.holder_stats (minute, holder, backend, acked) values (date_trunc('minute', now() - interval '2 minutes'), 'folded', 4242, 2), (date_trunc('minute', now() - interval '2 minutes'), 'folded', 4243, 3)`,
    );
    expect(await sampleAt(new Date(now.getTime() + 60_000))).toBe(true);
    const [left] = await app.db.query<{ samples: number; holders: number }>(`
      select (select count(*)::int from queen.stats_samples where at < now() - interval '24 hours') as samples,
             (select count(*)::int from queen.holder_stats where minute < now() - interval '24 hours') as holders`);
    expect(left).toEqual({ samples: 0, holders: 0 });
    // past minutes of ended backends fold into one row
    expect(await app.db.query(`select backend, acked::int from queen.holder_stats where holder = 'folded'`)).toEqual([
      { backend: 0, acked: 5 },
    ]);
  });

  it('refuses bad input with a 400 naming it, and unknown queues and groups with a 404', async () => {
    const cases: [string, number, RegExp][] = [
      ['/api/v1/stats?minutes=0', 400, /^minutes: /],
      ['/api/v1/stats?minutes=abc', 400, /^minutes: must be an integer/],
      ['/api/v1/stats?minutes=1441', 400, /^minutes: must be at most 1440/],
      ['/api/v1/stats?group=g', 400, /^group: needs queue/],
      ['/api/v1/stats?points=0', 400, /^points: /],
      [`/api/v1/stats?queue=${'x'.repeat(600)}`, 400, /^queue: /],
      ['/api/v1/stats?queue=stats.none', 404, /queue not found/],
      ['/api/v1/stats?queue=stats.rates&group=nobody', 404, /group not found/],
    ];
    for (const [path, status, error] of cases) {
      const res = await app.api.get(path);
      expect([path, res.status]).toEqual([path, status]);
      expect(res.body.error).toMatch(error);
    }
  });

  it('samples at 10,000 partitions in one statement whose cost follows queues and groups (timing printed)', async () => {
    const queue = 'stats.wide';
    const items = Array.from({ length: 10_000 }, (_, i) => ({ queue, partition: `w${i}`, payload: { i } }));
    for (let i = 0; i < items.length; i += 500) expect((await app.api.push(items.slice(i, i + 500))).status).toBe(201);
    // a group on it: a cursor per partition
    await popQueue(app.api, queue, { consumerGroup: 'wide', batch: 1 });
    const [{ n }] = await app.db.query<{ n: number }>(
      `
      select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1 and c.consumer_group = 'wide'`,
      [queue],
    );
    expect(n).toBe(10_000);
    const at = new Date((await dbNow()).getTime() + 120_000);
    const plan = await app.db.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, format text) select queen.sample_stats(interval '0', interval '24 hours', $1)`,
      [at],
    );
    const took = plan.map((r) => r['QUERY PLAN']).find((l) => l.startsWith('Execution Time'));
    console.log(`sample_stats at ${n} partitions in one queue (plus the test's other queues): ${took}`);
    expect(took).toBeDefined();
  });

  it('reads only its window of the one series asked for, by index, at 10,000 partitions × 4 groups × 24 h of samples (plans printed)', async () => {
    for (let i = 0; i < 20; i++) await pushMany(app.api, `stats.scale.${i}`, 'p0', 1);
    // 24 h of samples every 15 s of every queue (the 10,000-partition one included): its own row and 3 groups
    const wroteAt = Date.now();
    await app.db.query(`
      insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag)
      select date_trunc('second', now()) - k * interval '15 seconds', q.id, g, 5760 - k, 5760 - k, 5760 - k, 0, 0
      from queen.queues q, generate_series(1, 5760) k, unnest(array['', 'g1', 'g2', 'g3']) g
      on conflict do nothing`);
    await app.db.query('analyze queen.stats_samples');
    const [{ rows: total, queues }] = await app.db.query<{ rows: number; queues: number }>(
      `select count(*)::int as rows, count(distinct queue_id)::int as queues from queen.stats_samples`,
    );
    const dialect = new PgDialect();
    const plan = async (label: string, f: Parameters<typeof trendsStatement>[0]) => {
      const q = dialect.sqlToQuery(trendsStatement(f, 15));
      const lines = (await app.db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${q.sql}`, q.params)).map(
        (r) => r['QUERY PLAN'],
      );
      const at = lines.findIndex((l) => /Scan.* on stats_samples/.test(l));
      const node = [
        lines[at],
        ...lines.slice(at + 1).filter((l, i, rest) => rest.slice(0, i + 1).every((x) => !/->/.test(x))),
      ];
      const number = (re: RegExp) => Number(node.map((l) => re.exec(l)?.[1]).find(Boolean) ?? 0);
      // index entries the scan went through: the rows it returned and those its filter dropped
      const read = number(/actual time=\S+ rows=(\d+)/) + number(/Rows Removed by Filter: (\d+)/);
      console.log(
        `${label}: ${node.map((l) => l.trim()).join(' | ')} | ${lines.find((l) => l.startsWith('Execution Time'))} (${total} samples)`,
      );
      return { scan: lines.join('\n'), read };
    };
    // a series over 60 minutes, from the sample before: 243 rows at most; the retention holds 5,760
    const overview = await plan('Overview sparklines, every queue', { minutes: 60, points: 60 });
    expect(overview.scan).toMatch(/Index Scan using stats_samples_queues on stats_samples/);
    expect(overview.scan).not.toMatch(/Seq Scan on stats_samples|stats_samples_at/);
    // (and per queue the app's own sampler may have added a sample or two while the test ran)
    expect(overview.read).toBeLessThanOrEqual(queues * 245);
    const queueChart = await plan('queue chart, no group', { queue: 'stats.wide', minutes: 60 });
    expect(queueChart.scan).toMatch(/Index Scan using stats_samples_(pkey|queues) on stats_samples/);
    expect(queueChart.read).toBeLessThanOrEqual(queues * 245);
    const groupChart = await plan('queue chart, group g2', { queue: 'stats.wide', group: 'g2', minutes: 60 });
    expect(groupChart.scan).toMatch(/(Index Scan using|Bitmap Index Scan on) stats_samples_(pkey|queues)/);
    expect(groupChart.read).toBeLessThanOrEqual(243);
    // the queue chart shows its queue as a whole: it reads no group's samples
    const [series] = (await app.api.get('/api/v1/stats?queue=stats.wide')).body.series;
    // the hour's 240 samples, less one for every 15 s this test has taken since it wrote them
    const elapsed = Math.floor((Date.now() - wroteAt) / 15_000);
    expect(series.group).toBeNull();
    // (and one either way for where the hour's edges fall between two samples)
    expect(series.at.length).toBeGreaterThanOrEqual(240 - elapsed - 2);
    expect(series.at.length).toBeLessThanOrEqual(241);
  });
});
