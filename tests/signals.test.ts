// Issue 34, item 3: the dashboard's signals are right when it matters. Side by side, a healthy
// noisy group, a growing one and ones that only wobble; a healthy group's holders, one that extends
// its lease as a heartbeat, a hung one (its lease ran past its expiry) and a dead one (quiet for
// 7 minutes on 15-minute leases while its peers work). Every flag is checked against the rule
// (lib/dashboard/signals.ts) on figures read from the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });

describe('lag growth: sustained and large enough', () => {
  it('flags the group whose lag rose by 100 in every sample, not the ones that wobble, went 0 → 1, or came back down', async () => {
    await pushMany(app.api, 'sig.lag', 'p', 200);
    // each group's lag now: 200 less what it committed (autoAck commits at once)
    const committed: Record<string, number> = { steady: 185, tiny: 199, rising: 0, dip: 0 };
    for (const [group, n] of Object.entries(committed)) {
      if (n) await popQueue(app.api, 'sig.lag', { consumerGroup: group, batch: n, autoAck: true });
      else await popQueue(app.api, 'sig.lag', { consumerGroup: group, batch: 1, leaseSeconds: 600 });
    }
    const [{ qid }] = await app.db.query<any>("select id as qid from queen.queues where name = 'sig.lag'");
    const samples: Record<string, number[]> = {
      steady: [14, 15, 13], // a group keeping up: 14, 15, 13, now 15
      tiny: [0, 1, 1], // 0 → 1
      rising: [100, 130, 160], // now 200: +100, above 100 in every sample since
      dip: [100, 130, 90], // now 200, but it came back below where it was
    };
    for (const [group, [then, mid, late]] of Object.entries(samples))
      await app.db.query(
        `insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag) values
         (now() - interval '5 minutes 10 seconds', $1, $2, 0, 0, 0, 0, $3),
         (now() - interval '3 minutes', $1, $2, 0, 0, 0, 0, $4),
         (now() - interval '1 minute', $1, $2, 0, 0, 0, 0, $5)`,
        [qid, group, then, mid, late],
      );
    const lags = await app.db.query<any>(
      `select consumer_group as group, lag::int from queen.group_figures() where queue_id = $1 order by 1`,
      [qid],
    );
    expect(lags).toEqual([
      { group: 'dip', lag: 200 },
      { group: 'rising', lag: 200 },
      { group: 'steady', lag: 15 },
      { group: 'tiny', lag: 1 },
    ]);

    const res = await app.api.get('/api/dashboard/groups');
    const growing = res.body.groups.filter((g: any) => g.growing).map((g: any) => g.group);
    expect(growing).toEqual(['rising']);
    expect(res.body.groups[0].group).toBe('rising'); // growing lags first
    const rising = res.body.groups[0].queues.find((q: any) => q.queue === 'sig.lag');
    expect(rising.growing).toEqual({ from: 100, to: 200 });

    const overview = await app.api.get('/api/dashboard/overview');
    const row = overview.body.queues.find((q: any) => q.name === 'sig.lag');
    expect(row.problems.filter((p: any) => p.text.includes('lag grew'))).toEqual([
      {
        level: 'warn',
        text: "group rising's lag grew from 100 messages to 200 messages in 5 min",
        href: '/groups?group=rising',
      },
    ]);
  });
});

describe('silent holders: judged by the current expiry and the group’s peers', () => {
  it('marks the hung and the dead holder, not the healthy noisy ones nor the one extending its lease', async () => {
    for (let i = 0; i < 8; i++) await pushMany(app.api, 'sig.holders', `p${i}`, 10);
    const claim = (holder: string, partition: string, leaseSeconds: number) =>
      app.api.get(
        `/api/v1/pop/queue/sig.holders/partition/${partition}?consumerGroup=work&batch=1&leaseSeconds=${leaseSeconds}`,
        as(holder),
      );
    // the dead one: 15-minute leases, quiet for 7 minutes
    const dead = await claim('dead-worker', 'p0', 900);
    await app.db.query(
      `update queen.cursors set lease_acquired_at = now() - interval '7 minutes', lease_expires_at = now() + interval '8 minutes'
       where lease_id = $1`,
      [dead.body.leaseId],
    );
    // the hung one: claimed 27 minutes ago, its lease ran out and nobody reclaimed it yet
    const hung = await claim('hung-worker', 'p1', 60);
    await app.db.query(
      `update queen.cursors set lease_acquired_at = now() - interval '27 minutes', lease_expires_at = now() - interval '26 minutes'
       where lease_id = $1`,
      [hung.body.leaseId],
    );
    // the heartbeat: claimed 10 minutes ago with 30 s, extended to an hour just now
    const beat = await claim('heartbeat-worker', 'p2', 30);
    await app.db.query(
      `update queen.cursors set lease_acquired_at = now() - interval '10 minutes' where lease_id = $1`,
      [beat.body.leaseId],
    );
    expect((await app.api.post(`/api/v1/lease/${beat.body.leaseId}/extend`, { seconds: 3600 })).status).toBe(200);
    // the healthy noisy ones: claim, ack, claim again, each at its own pace
    for (let round = 0; round < 3; round++)
      for (const [i, holder] of ['noisy-1', 'noisy-2', 'noisy-3'].entries()) {
        const r = await claim(holder, `p${3 + i}`, 30);
        if (round < 2 || i === 0) await ackAll(app.api, r as any);
      }

    const res = await app.api.get('/api/v1/consumers?pageSize=1000');
    const by = Object.fromEntries(res.body.consumers.map((c: any) => [c.holder, c]));
    expect(by['dead-worker']).toMatchObject({ silent: true, silentWhy: 'quiet', partitions: 1 });
    expect(by['hung-worker']).toMatchObject({ silent: true, silentWhy: 'expired', expiredNow: 1 });
    expect(by['heartbeat-worker']).toMatchObject({ silent: false, silentWhy: null });
    for (const h of ['noisy-1', 'noisy-2', 'noisy-3']) expect(by[h]).toMatchObject({ silent: false });
    // the dead one's quiet is its last claim's age (no ack, no extension), from the database's clock
    const [{ quiet }] = await app.db.query<any>(
      'select extract(epoch from now() - lease_acquired_at)::float8 as quiet from queen.cursors where lease_id = $1',
      [dead.body.leaseId],
    );
    expect(Math.abs(by['dead-worker'].quietSeconds - quiet)).toBeLessThan(5);
    // the page's silent holders are the rule's, counted in SQL: an expired lease not reclaimed, or
    // quiet 2 minutes or more while a peer of its group claimed within a quarter of that
    const [{ n }] = await app.db.query<any>(`
      select count(distinct c.lease_holder)::int as n from queen.cursors c
      where c.lease_id is not null and c.queue_id = (select id from queen.queues where name = 'sig.holders')
        and (c.lease_expires_at <= now()
             or (c.lease_acquired_at < now() - interval '2 minutes'
                 and not exists (select 1 from queen.deliveries d where d.lease_id = c.lease_id and d.extended_at is not null)
                 and exists (select 1 from queen.group_members m where m.queue_id = c.queue_id and m.consumer_group = c.consumer_group
                               and m.holder <> c.lease_holder
                               and m.seen_at > now() - (now() - c.lease_acquired_at) / 4)))`);
    expect(res.body.consumers.filter((c: any) => c.silent)).toHaveLength(n);
    expect(n).toBe(2);
  });
});
