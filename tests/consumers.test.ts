// The Consumers page's route (GET /api/v1/consumers): one row per lease holder, its leases now
// (checked against counts from queen.cursors) and its last hour (acks, failures, deliveries and
// expired leases, attributed by the trigger of sql/019 to the holder of the lease acted on).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';
import { leasesHref } from '@/lib/dashboard/links';

describe('consumers', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  const as = (holder: string) => ({ headers: { 'x-queen-consumer': holder } });
  const ack = (group: string, messages: any[], status: 'completed' | 'failed') =>
    app.api.post('/api/v1/ack/batch', {
      consumerGroup: group,
      acknowledgments: messages.map((m: any) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: m.leaseId,
        status,
        error: status === 'failed' ? 'boom' : null,
      })),
    });

  it('lists each holder with what it holds now and its acks, failures and expired leases of the last hour', async () => {
    for (const p of ['p0', 'p1', 'p2']) await pushMany(app.api, 'cons.q', p, 10);
    await pushMany(app.api, 'cons.x', 'p0', 10);
    await pushMany(app.api, 'cons.idle', 'p0', 3);
    await pushMany(app.api, 'cons.auto', 'p0', 3);

    // worker-a: one lease over two partitions; acks 3 and fails 1 (which ends that partition's lease)
    const a = await popQueue(app.api, 'cons.q', { consumerGroup: 'g', partitions: 2, batch: 20 }, as('worker-a'));
    expect(a.body.messages).toHaveLength(20);
    const partitions = [...new Set(a.body.messages.map((m: any) => m.partitionId))];
    const [first, second] = partitions.map((p) => a.body.messages.filter((m: any) => m.partitionId === p));
    expect((await ack('g', first.slice(0, 3), 'completed')).status).toBe(200);
    expect((await ack('g', second.slice(0, 1), 'failed')).status).toBe(200);

    // worker-b's lease expires and worker-c reclaims it: the expiry is worker-b's
    const b = await popQueue(app.api, 'cons.x', { consumerGroup: 'g', batch: 5, leaseSeconds: 1 }, as('worker-b'));
    expect(b.body.messages).toHaveLength(5);
    // worker-d's lease expires and nobody reclaims it: it still holds it, expired
    const d = await popQueue(app.api, 'cons.idle', { consumerGroup: 'g', batch: 3, leaseSeconds: 1 }, as('worker-d'));
    expect(d.body.messages).toHaveLength(3);
    // worker-e's lease expires and an autoAck pop reclaims it: the expiry is worker-e's, the acks nobody's
    const e = await popQueue(app.api, 'cons.auto', { consumerGroup: 'g', batch: 3, leaseSeconds: 1 }, as('worker-e'));
    expect(e.body.messages).toHaveLength(3);
    await sleep(1500);
    expect(
      (await popQueue(app.api, 'cons.auto', { consumerGroup: 'g', batch: 3, autoAck: true })).body.messages,
    ).toHaveLength(3);
    const c = await popQueue(app.api, 'cons.x', { consumerGroup: 'g', batch: 5 }, as('worker-c'));
    expect(c.body.messages.map((m: any) => m.transactionId)).toEqual(b.body.messages.map((m: any) => m.transactionId));

    const res = await app.api.get('/api/v1/consumers');
    expect(res.status).toBe(200);
    const rows = Object.fromEntries(res.body.consumers.map((r: any) => [r.holder, r]));
    expect(Object.keys(rows).sort()).toEqual(['worker-a', 'worker-b', 'worker-c', 'worker-d', 'worker-e']);
    expect(res.body.total).toBe(5);

    // what each holds now, counted from the cursors
    const held = await app.db.query<{
      holder: string;
      leases: number;
      partitions: number;
      messages: number;
      expired: number;
    }>(`
      select c.lease_holder as holder, count(distinct c.lease_id)::int as leases, count(*)::int as partitions,
             sum(c.lease_end_offset - c.committed_offset)::int as messages,
             count(*) filter (where c.lease_expires_at <= now())::int as expired
      from queen.cursors c where c.lease_id is not null group by c.lease_holder`);
    for (const h of Object.keys(rows)) {
      const db = held.find((r) => r.holder === h) ?? { leases: 0, partitions: 0, messages: 0, expired: 0 };
      expect([h, rows[h].leases, rows[h].partitions, rows[h].messages, rows[h].expiredNow]).toEqual([
        h,
        db.leases,
        db.partitions,
        db.messages,
        db.expired,
      ]);
    }
    expect(rows['worker-a']).toMatchObject({ leases: 1, partitions: 1, messages: 7, acked: 3, failed: 1, expired: 0 });
    expect(rows['worker-b']).toMatchObject({ leases: 0, acked: 0, failed: 0, expired: 1 });
    expect(rows['worker-c']).toMatchObject({ leases: 1, messages: 5, acked: 0, expired: 0 });
    expect(rows['worker-d']).toMatchObject({ leases: 1, expiredNow: 1, acked: 0, expired: 0 });
    expect(rows['worker-e']).toMatchObject({ leases: 0, acked: 0, expired: 1 });
    // the history equals the minute rows in the database
    const history = await app.db.query<{ holder: string; acked: number; failed: number; expired: number }>(`
      select holder, sum(acked)::int as acked, sum(failed)::int as failed, sum(expired)::int as expired
      from queen.holder_stats where minute >= date_trunc('minute', now()) - interval '59 minutes' group by holder`);
    expect(history.map((h) => h.holder).sort()).toEqual(['worker-a', 'worker-b', 'worker-e']);
    for (const h of history)
      expect(rows[h.holder]).toMatchObject({ acked: h.acked, failed: h.failed, expired: h.expired });
    // most recently seen first; worker-b was seen at its claim, not at its expiry
    expect(res.body.consumers[0].holder).toBe('worker-c');
    expect(rows['worker-b'].lastSeenAt).not.toBeNull();
    const [claimed] = await app.db.query<{ at: string }>(
      `select queen.iso(max(lease_acquired_at)) as at from queen.cursors where lease_holder = 'worker-c'`,
    );
    expect(rows['worker-c'].lastSeenAt).toBe(claimed.at);
    expect(Date.parse(rows['worker-b'].lastSeenAt)).toBeLessThan(Date.parse(rows['worker-c'].lastSeenAt));
  });

  it('pages, and refuses bad input with a 400 naming it', async () => {
    const page = await app.api.get('/api/v1/consumers?pageSize=1&page=2');
    expect(page.status).toBe(200);
    expect(page.body.consumers).toHaveLength(1);
    expect(page.body.total).toBe(5);
    for (const [path, error] of [
      ['?pageSize=0', /^pageSize: /],
      ['?pageSize=1001', /^pageSize: /],
      ['?page=x', /^page: must be an integer/],
    ] as const) {
      const res = await app.api.get(`/api/v1/consumers${path}`);
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body.error).toMatch(error);
    }
  });

  it('each linked figure is the total of the Leases page its link opens (worker-1 vs worker-10, a lease over 3 partitions)', async () => {
    for (const p of ['p0', 'p1', 'p2']) await pushMany(app.api, 'cons.link', p, 4);
    await pushMany(app.api, 'cons.link10', 'p0', 4);
    await pushMany(app.api, 'cons.link10.idle', 'p0', 2);
    const one = await popQueue(app.api, 'cons.link', { consumerGroup: 'g', partitions: 3, batch: 12 }, as('worker-1'));
    expect(new Set(one.body.messages.map((m: any) => m.partitionId)).size).toBe(3);
    expect(
      (await popQueue(app.api, 'cons.link10', { consumerGroup: 'g', batch: 4 }, as('worker-10'))).body.messages,
    ).toHaveLength(4);
    expect(
      (await popQueue(app.api, 'cons.link10.idle', { consumerGroup: 'g', batch: 2, leaseSeconds: 1 }, as('worker-10')))
        .body.messages,
    ).toHaveLength(2);
    await sleep(1500);

    const rows = Object.fromEntries(
      (await app.api.get('/api/v1/consumers?pageSize=1000')).body.consumers.map((r: any) => [r.holder, r]),
    );
    expect(rows['worker-1']).toMatchObject({ leases: 1, partitions: 3, expiredNow: 0 });
    expect(rows['worker-10']).toMatchObject({ leases: 2, partitions: 2, expiredNow: 1 });
    for (const holder of ['worker-1', 'worker-10']) {
      // the links of the Consumers page, as the page builds them
      const listed = async (state?: string) => {
        const res = await app.api.get(`/api/v1${leasesHref({ holder, state })}`);
        expect(res.body.leases.every((l: any) => l.holder === holder)).toBe(true);
        return res.body.total;
      };
      expect([holder, rows[holder].partitions, rows[holder].expiredNow]).toEqual([
        holder,
        await listed(),
        await listed('expired'),
      ]);
    }
    // the text box still matches part of a name, in any case
    expect((await app.api.get('/api/v1/leases?holder=WORKER-1')).body.total).toBe(5);
  });

  it('keeps a holder whose leases were released for the hour, counting them, and marks a holder silent while it holds leases', async () => {
    await pushMany(app.api, 'w20.consumers', 'p', 1);
    await pushMany(app.api, 'w20.consumers', 'q', 1);
    const r = await app.api.get(
      '/api/v1/pop/queue/w20.consumers/partition/p?consumerGroup=g&leaseSeconds=30',
      as('released-holder'),
    );
    await app.api.post(`/api/v1/leases/${r.body.leaseId}/release`, { reason: 'x' });
    const s = await app.api.get(
      '/api/v1/pop/queue/w20.consumers/partition/q?consumerGroup=g&leaseSeconds=30',
      as('silent-holder'),
    );
    const list = async () => (await app.api.get('/api/v1/consumers?pageSize=1000')).body.consumers;
    const released = (await list()).find((c: any) => c.holder === 'released-holder');
    expect(released).toMatchObject({ partitions: 0, released: 1, silent: false });
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({
      partitions: 1,
      silent: false,
    });
    // quiet past the duration it asked for, alone in its group, its lease not yet expired: judged by
    // its current expiry, not silent (issue 34; it was marked after one lease duration before)
    await app.db.query(
      "update queen.cursors set lease_acquired_at = now() - interval '40 seconds' where lease_id = $1",
      [s.body.leaseId],
    );
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({ silent: false });
    // past its current expiry and nobody reclaimed it: silent
    await app.db.query("update queen.cursors set lease_expires_at = now() - interval '1 second' where lease_id = $1", [
      s.body.leaseId,
    ]);
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({
      silent: true,
      silentWhy: 'expired',
    });
    // the fold of past minutes keeps the released count
    await app.db.query(
      "update queen.holder_stats set minute = minute - interval '1 minute' where holder = 'released-holder'",
    );
    await app.db.query("select queen.sample_stats(interval '0', interval '24 hours', now())");
    expect((await list()).find((c: any) => c.holder === 'released-holder')).toMatchObject({ released: 1 });
  });
});
