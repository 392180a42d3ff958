// Issue 20, the on-call dashboard's ways out, against the real app and PostgreSQL: the audit log
// newest first and paged from the newest; a poison message moved to the dead letters or skipped,
// fenced against its holder's lease; bulk release; consumer groups; deliveries of a message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
const admin = { headers: { 'x-queen-actor': 'oncall' } };

describe('the audit log', () => {
  it('lists newest first by time, then id (ids past 9 and past 99 too), and pages on from the newest', async () => {
    // 120 entries; their ids as text would sort 99 before 120
    await app.db.query(`insert into queen.audit_log (actor, action, target_type, target, result, at)
      select 'seed', 'cursor.pause', 'cursor', 'seed-' || n, 'ok', now() - make_interval(secs => 1000 - n) from generate_series(1, 120) n`);
    // a later entry with a lower id than the newest: time decides
    await app.db.query(`update queen.audit_log set at = now() + interval '1 hour' where target = 'seed-5'`);
    const first = await app.api.get('/api/v1/audit?limit=50');
    expect(first.status).toBe(200);
    const targets = first.body.entries.map((e: any) => e.target);
    expect(targets.slice(0, 3)).toEqual(['seed-5', 'seed-120', 'seed-119']);
    expect(targets).toHaveLength(50);
    const ats = first.body.entries.map((e: any) => Date.parse(e.at));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);

    const seen = new Set<string>(targets);
    let next = first.body.next;
    let pages = 1;
    while (next) {
      const page = await app.api.get(`/api/v1/audit?limit=50&before=${next}`);
      for (const e of page.body.entries) {
        expect(seen.has(e.target)).toBe(false);
        seen.add(e.target);
      }
      next = page.body.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.size).toBe(120);
  });
});

const partitionIds = async (queue: string) =>
  Object.fromEntries((await app.api.get(`/api/v1/resources/queues/${queue}`)).body.partitions.map((p: any) => [p.name, p.id]));
const ack = (m: any, leaseId: string | null, status = 'completed') =>
  app.api.post('/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, consumerGroup: m.consumerGroup, leaseId, status, error: status === 'failed' ? 'boom' : null });
/** Ends a lease's time now, as its expiry would (the cursor, and the backlog row that mirrors it). */
async function expire(leaseId: string) {
  await app.db.query("update queen.cursors set lease_expires_at = now() - interval '1 second' where lease_id = $1", [leaseId]);
  await app.db.query(`update queen.backlog b set blocked_until = now() - interval '1 second' from queen.cursors c
    where c.lease_id = $1 and b.partition_id = c.partition_id and b.consumer_group = c.consumer_group`, [leaseId]);
}
const setAside = (partitionId: string, group: string, body: unknown) =>
  app.api.post(`/api/v1/cursors/${partitionId}/${group}/set-aside`, body, admin);

describe('a way out for a poison message', () => {
  it('moves the message its lease is stuck on to the dead letters, fenced against that lease, and the next pop delivers the next one', async () => {
    await pushMany(app.api, 'w20.poison', 'p', 3);
    const { p } = await partitionIds('w20.poison');
    const first = await popQueue(app.api, 'w20.poison', { consumerGroup: 'g', batch: 1, leaseSeconds: 120 }, as('worker-a'));
    expect(first.body.messages[0].transactionId).toBe('p-0');
    const leaseId = first.body.leaseId;

    // fenced: refused unless the lease the operator saw is the one on it
    const stale = await setAside(p, 'g', { action: 'dead-letter', reason: 'crashes', leaseId: '00000000-0000-7000-8000-000000000000' });
    expect(stale.status).toBe(409);
    expect(stale.body.currentLeaseId).toBe(leaseId);
    expect((await setAside(p, 'g', { action: 'dead-letter', leaseId })).status).toBe(400); // no reason
    expect((await setAside(p, 'g', { action: 'dead-letter', reason: 'x', transactionId: 'nope' })).status).toBe(404);

    const res = await setAside(p, 'g', { action: 'dead-letter', reason: 'crashes the consumer', leaseId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ queue: 'w20.poison', partition: 'p', group: 'g', offset: 1, transactionId: 'p-0', committed: 1,
      holder: 'worker-a', leaseEnded: true, leaseId });

    // the holder's ack with the ended lease is refused; the next pop delivers p-1
    expect((await ack(first.body.messages[0], leaseId)).body[0]).toMatchObject({ success: true }); // offset done already: idempotent
    const next = await popQueue(app.api, 'w20.poison', { consumerGroup: 'g', batch: 1 }, as('worker-b'));
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['p-1']);

    const dead = await app.db.query<any>('select "offset", error_message from queen.dead_letters where partition_id = $1 and consumer_group = $2', [p, 'g']);
    expect(dead.map((d) => Number(d.offset))).toEqual([1]);
    const dlq = await app.api.get('/api/v1/dlq?queue=w20.poison');
    expect(dlq.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const [audit] = await app.db.query<any>("select actor, reason, target, details from queen.audit_log where action = 'message.dead_letter' order by id desc limit 1");
    expect(audit).toMatchObject({ actor: 'oncall', reason: 'crashes the consumer', target: `${p}/p-0` });
    expect(audit.details).toMatchObject({ queue: 'w20.poison', partitionId: p, group: 'g', offset: 1, leaseId, leaseEnded: true, holder: 'worker-a' });
    // found from the partition's audit filter, like every action on it
    expect((await app.api.get(`/api/v1/audit?partitionId=${p}&group=g`)).body.entries.map((e: any) => e.action)).toContain('message.dead_letter');
    // done with it now
    expect((await setAside(p, 'g', { action: 'skip', reason: 'again', transactionId: 'p-0' })).status).toBe(409);
  });

  it('skips the first message of an expired, unreclaimed lease, counts the expiry, and another lease on it refuses the ack', async () => {
    await pushMany(app.api, 'w20.skip', 'p', 3);
    const { p } = await partitionIds('w20.skip');
    const first = await popQueue(app.api, 'w20.skip', { consumerGroup: 'g', batch: 2, leaseSeconds: 120 }, as('worker-a'));
    await expire(first.body.leaseId);
    const res = await setAside(p, 'g', { action: 'skip', reason: 'poison', leaseId: first.body.leaseId });
    expect(res.body).toMatchObject({ offset: 1, committed: 1, leaseExpired: true, leaseEnded: true });
    const [c] = await app.db.query<any>('select lease_id, lease_expiries::int, dead_letters::int from queen.cursors where partition_id = $1', [p]);
    expect(c).toEqual({ lease_id: null, lease_expiries: 1, dead_letters: 0 });
    // the rest of the span (p-1) is delivered again, then p-2
    const next = await popQueue(app.api, 'w20.skip', { consumerGroup: 'g', batch: 5 });
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['p-1', 'p-2']);
    expect((await ack(first.body.messages[1], first.body.leaseId)).body[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    // no lease on a message: leaseId null says "none", and a pending message is set aside by its transaction id
    await pushMany(app.api, 'w20.skip', 'p', 1, 'p', 3);
    const byId = await setAside(p, 'other', { action: 'skip', reason: 'x', transactionId: 'p-3', leaseId: null });
    expect(byId.status).toBe(404); // group never reached the partition
  });

  it('one of a holder\'s ack and an operator\'s set-aside of the same message wins, never both, across several consumers', async () => {
    for (const part of ['a', 'b', 'c', 'd']) await pushMany(app.api, 'w20.race', part, 2);
    const ids = await partitionIds('w20.race');
    const pops = await Promise.all(['a', 'b', 'c', 'd'].map((part, i) =>
      app.api.get(`/api/v1/pop/queue/w20.race/partition/${part}?consumerGroup=g&batch=1&leaseSeconds=120`, as(`worker-${i}`))));
    const results = await Promise.all(pops.map(async (r) => {
      const m = r.body.messages[0];
      const [acked, aside] = await Promise.all([
        ack(m, r.body.leaseId),
        setAside(m.partitionId, 'g', { action: 'dead-letter', reason: 'race', leaseId: r.body.leaseId, transactionId: m.transactionId }),
      ]);
      return { acked: acked.body[0].success, aside: aside.status === 200, m };
    }));
    for (const r of results) {
      // an ack after the set-aside is of an offset already done (idempotent); a set-aside after the ack is refused
      expect(r.acked || r.aside).toBe(true);
      const dead = await app.db.query('select 1 from queen.dead_letters where partition_id = $1 and consumer_group = $2', [r.m.partitionId, 'g']);
      expect(dead.length).toBe(r.aside ? 1 : 0);
    }
    expect(Object.keys(ids)).toHaveLength(4);
    for (const part of ['a', 'b', 'c', 'd']) {
      const next = await app.api.get(`/api/v1/pop/queue/w20.race/partition/${part}?consumerGroup=g&batch=5&leaseSeconds=5`);
      expect(next.body.messages.map((m: any) => m.transactionId)).toEqual([`${part}-1`]);
    }
  });
});

describe('bulk release', () => {
  it('releases every lease named with one reason, one audit entry per lease, and answers the ones that had ended', async () => {
    for (let i = 0; i < 10; i++) await pushMany(app.api, 'w20.bulk', `p${i}`, 2);
    const leases: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await app.api.get(`/api/v1/pop/queue/w20.bulk/partition/p${i}?consumerGroup=g&leaseSeconds=300`, as('dead-holder'));
      leases.push(r.body.leaseId);
    }
    const listed = await app.api.get('/api/v1/leases?holderIs=dead-holder');
    expect(listed.body.total).toBe(10);
    // one ended meanwhile
    const gone = await app.api.post(`/api/v1/leases/${leases[9]}/release`, { reason: 'by hand' });
    expect(gone.status).toBe(200);
    const res = await app.api.post('/api/v1/leases/release', { leaseIds: leases, reason: 'dead-holder died' }, admin);
    expect(res.status).toBe(200);
    expect(res.body.released).toBe(9);
    expect(res.body.results[9]).toMatchObject({ leaseId: leases[9], released: false, error: 'Lease not found' });
    expect(res.body.results[0].partitions[0]).toMatchObject({ queue: 'w20.bulk', partition: 'p0', holder: 'dead-holder', span: { from: 1, to: 2 } });
    expect((await app.api.get('/api/v1/leases?holderIs=dead-holder')).body.total).toBe(0);
    const audits = await app.db.query<any>("select target from queen.audit_log where action = 'lease.release' and reason = 'dead-holder died' order by id");
    expect(audits.map((a) => a.target)).toEqual(leases.slice(0, 9));
    expect((await app.api.post('/api/v1/leases/release', { leaseIds: leases })).status).toBe(400); // no reason
    expect((await app.api.post('/api/v1/leases/release', { leaseIds: [], reason: 'x' })).status).toBe(400);
  });
});

describe('facts that stay true', () => {
  it('an extended lease is held long but not stuck; one past its current expiry is', async () => {
    await pushMany(app.api, 'w20.stuck', 'a', 1);
    await pushMany(app.api, 'w20.stuck', 'b', 1);
    const a = await app.api.get('/api/v1/pop/queue/w20.stuck/partition/a?consumerGroup=g&leaseSeconds=10');
    const b = await app.api.get('/api/v1/pop/queue/w20.stuck/partition/b?consumerGroup=g&leaseSeconds=10');
    // held an hour by extending
    await app.db.query("update queen.cursors set lease_acquired_at = now() - interval '1 hour' where lease_id = $1", [a.body.leaseId]);
    expect((await app.api.post(`/api/v1/lease/${a.body.leaseId}/extend`, { seconds: 120 })).body[0].success).toBe(true);
    await expire(b.body.leaseId);
    const stuck = await app.api.get('/api/v1/leases?queue=w20.stuck&state=stuck');
    expect(stuck.body.leases.map((l: any) => l.partition)).toEqual(['b']);
    const long = await app.api.get('/api/v1/leases?queue=w20.stuck&state=held-long');
    expect(long.body.leases.map((l: any) => l.partition)).toEqual(['a']);
    const overview = await app.api.get('/api/dashboard/overview');
    const q = overview.body.queues.find((x: any) => x.name === 'w20.stuck');
    expect(q.stuckLeases).toBe(1);
  });

  it('the message lists every delivery: holder, lease, claimed, and how each ended', async () => {
    await pushMany(app.api, 'w20.deliveries', 'p', 1);
    const { p } = await partitionIds('w20.deliveries');
    const one = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-1'));
    await expire(one.body.leaseId);
    const two = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-2'));
    await ack(two.body.messages[0], two.body.leaseId, 'failed');
    await app.db.query("update queen.cursors set retry_not_before = null where partition_id = $1", [p]);
    await app.db.query("update queen.backlog set blocked_until = null where partition_id = $1", [p]);
    const three = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'g', leaseSeconds: 60 }, as('w-3'));
    const four = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'other', leaseSeconds: 60 }, as('w-4'));
    await app.api.post(`/api/v1/leases/${four.body.leaseId}/release`, { reason: 'x' });
    const five = await popQueue(app.api, 'w20.deliveries', { consumerGroup: 'other', leaseSeconds: 60 }, as('w-5'));
    await ack(three.body.messages[0], three.body.leaseId);

    const m = await app.api.get(`/api/v1/messages/${p}/p-0`);
    const listed = m.body.deliveries.map((d: any) => [d.group, d.holder, d.leaseId, d.ended]);
    expect(listed).toEqual([
      ['other', 'w-5', five.body.leaseId, 'live'],
      ['other', 'w-4', four.body.leaseId, 'released'],
      ['g', 'w-3', three.body.leaseId, 'acked'],
      ['g', 'w-2', two.body.leaseId, 'failed'],
      ['g', 'w-1', one.body.leaseId, 'expired'],
    ]);
    // as many as the group's counters say it was delivered
    expect(m.body.consumerGroups.find((g: any) => g.name === 'g').deliveries).toBe(3);
  });
});

describe('consumer groups', () => {
  it('lists each group with its queues: lag in messages (a database count) and time, members, leases, pauses, subscription, growth', async () => {
    for (const part of ['a', 'b']) await pushMany(app.api, 'w20.groups', part, 5);
    await pushMany(app.api, 'w20.groups2', 'x', 3);
    const ids = await partitionIds('w20.groups');
    const a = await app.api.get('/api/v1/pop/queue/w20.groups/partition/a?consumerGroup=billing&batch=2&leaseSeconds=120', as('biller-1'));
    await app.api.post('/api/v1/ack/batch', { consumerGroup: 'billing', acknowledgments: a.body.messages.map((m: any) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: a.body.leaseId })) });
    await app.api.get('/api/v1/pop/queue/w20.groups/partition/b?consumerGroup=billing&batch=1&leaseSeconds=120', as('biller-2'));
    await app.api.get('/api/v1/pop/queue/w20.groups2?consumerGroup=billing&batch=1&leaseSeconds=120', as('biller-2'));
    await app.api.post(`/api/v1/cursors/${ids.b}/billing/pause`, { paused: true, reason: 'x' });
    await app.api.post('/api/v1/consumer-groups/billing/subscription', { queue: 'w20.groups2', subscriptionMode: 'all' });
    // 5 minutes ago the lag on w20.groups was lower: it is growing
    const [{ qid }] = await app.db.query<any>("select id as qid from queen.queues where name = 'w20.groups'");
    await app.db.query(`insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag)
      values (now() - interval '5 minutes 10 seconds', $1, 'billing', 0, 0, 0, 0, 2), (now() - interval '2 minutes', $1, 'billing', 0, 0, 0, 0, 6)`, [qid]);

    const res = await app.api.get('/api/dashboard/groups?group=billing');
    expect(res.status).toBe(200);
    const [g] = res.body.groups;
    expect(g.group).toBe('billing');
    const [{ lag }] = await app.db.query<any>(`
      select count(*)::int as lag from queen.messages m join queen.cursors c on c.partition_id = m.partition_id
      join queen.queues q on q.id = c.queue_id
      where q.name = 'w20.groups' and c.consumer_group = 'billing' and m."offset" > c.committed_offset and not (m."offset" = any (c.acked_offsets))`);
    const onQueue = g.queues.find((q: any) => q.queue === 'w20.groups');
    expect(onQueue.lag).toBe(lag);
    expect(lag).toBe(8);
    expect(onQueue).toMatchObject({ partitions: 2, liveLeases: 1, expiredLeases: 0, paused: 1, growing: { from: 2, to: 8 } });
    expect(onQueue.lagSeconds).toBeGreaterThanOrEqual(0);
    expect(onQueue.trend.map((p: any) => p[1])).toEqual([2, 6]);
    expect(g.queues.find((q: any) => q.queue === 'w20.groups2')).toMatchObject({ lag: 3, subscription: { mode: 'all' }, growing: null });
    expect(g.lag).toBe(11);
    expect(g.growing).toBe(true);
    expect(g.members.map((m: any) => m.holder).sort()).toEqual(['biller-1', 'biller-2']);
    expect(g.liveLeases).toBe(2);

    // the Overview flags the growing group on the queue, linking to it
    const overview = await app.api.get('/api/dashboard/overview');
    const row = overview.body.queues.find((q: any) => q.name === 'w20.groups');
    expect(row.problems).toContainEqual({ level: 'warn', text: "group billing's lag grew from 2 messages to 8 messages in 5 min", href: '/groups?group=billing' });
    expect((await app.api.get('/api/dashboard/groups?minutes=0')).status).toBe(400);
    expect((await app.api.get('/api/dashboard/groups?group=nobody')).body.groups).toEqual([]);
  });
});

describe('Consumers', () => {
  it('keeps a holder whose leases were released for the hour, counting them, and marks a holder silent while it holds leases', async () => {
    await pushMany(app.api, 'w20.consumers', 'p', 1);
    await pushMany(app.api, 'w20.consumers', 'q', 1);
    const r = await app.api.get('/api/v1/pop/queue/w20.consumers/partition/p?consumerGroup=g&leaseSeconds=30', as('released-holder'));
    await app.api.post(`/api/v1/leases/${r.body.leaseId}/release`, { reason: 'x' });
    const s = await app.api.get('/api/v1/pop/queue/w20.consumers/partition/q?consumerGroup=g&leaseSeconds=30', as('silent-holder'));
    const list = async () => (await app.api.get('/api/v1/consumers?pageSize=1000')).body.consumers;
    const released = (await list()).find((c: any) => c.holder === 'released-holder');
    expect(released).toMatchObject({ partitions: 0, released: 1, silent: false });
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({ partitions: 1, silent: false });
    // a whole lease duration without a claim, an ack or an extension
    await app.db.query("update queen.cursors set lease_acquired_at = now() - interval '40 seconds' where lease_id = $1", [s.body.leaseId]);
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({ silent: true });
    // an extension is a sign of life
    await app.api.post(`/api/v1/lease/${s.body.leaseId}/extend`, { seconds: 30 });
    expect((await list()).find((c: any) => c.holder === 'silent-holder')).toMatchObject({ silent: false });
    // the fold of past minutes keeps the released count
    await app.db.query("update queen.holder_stats set minute = minute - interval '1 minute' where holder = 'released-holder'");
    await app.db.query("select queen.sample_stats(interval '0', interval '24 hours', now())");
    expect((await list()).find((c: any) => c.holder === 'released-holder')).toMatchObject({ released: 1 });
  });
});

describe('Live', () => {
  it('counts a partition\'s activity since a time from the database, and lists the claims before it', async () => {
    const since = (await app.db.query<any>('select queen.iso(now()) as t'))[0].t;
    for (let i = 0; i < 5; i++) await pushMany(app.api, 'w20.live', 'p', 10, 'p', i * 10);
    const a = await app.api.get('/api/v1/pop/queue/w20.live/partition/p?consumerGroup=g&batch=20', as('live-1'));
    await app.api.post('/api/v1/ack/batch', { consumerGroup: 'g', acknowledgments: a.body.messages.map((m: any) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: a.body.leaseId })) });
    const b = await app.api.get('/api/v1/pop/queue/w20.live/partition/p?consumerGroup=g&batch=5', as('live-2'));
    await expire(b.body.leaseId);
    const keys = encodeURIComponent(JSON.stringify([['w20.live', 'p'], ['w20.live', 'nope']]));
    const res = await app.api.get(`/api/dashboard/activity?since=${encodeURIComponent(since)}&partitions=${keys}`);
    expect(res.status).toBe(200);
    expect(res.body.partitions).toEqual([
      { partitionId: expect.any(String), queue: 'w20.live', partition: 'p', pushed: 50, claimed: 25, acked: 20, failed: 0, expired: 1 },
    ]);
    expect((await app.api.get(`/api/dashboard/activity?since=${encodeURIComponent(since)}&partitions=nope`)).status).toBe(400);
    const recent = await app.api.get('/api/dashboard/recent-claims?queue=w20.live');
    expect(recent.body.events.map((e: any) => [e.holder, e.partitions[0].count, e.ended])).toEqual([['live-2', 5, null], ['live-1', 20, 'acked']]);
  });
});

describe('smaller findings', () => {
  it('a dry run says who holds the partitions until when, and that a misspelt queue does not exist', async () => {
    await pushMany(app.api, 'w20.dry', 'p', 2);
    const held = await app.api.get('/api/v1/pop/queue/w20.dry?consumerGroup=g&leaseSeconds=120', as('worker-7'));
    const dry = await app.api.get('/api/dashboard/pop-preview?queue=w20.dry&consumerGroup=g');
    expect(dry.body).toMatchObject({ status: 204, empty: 'idle' });
    const [{ expires }] = await app.db.query<any>('select queen.iso(lease_expires_at) as expires from queen.cursors where lease_id = $1', [held.body.leaseId]);
    expect(dry.body.why.text).toBe(`Held by other leases of group g: p is leased by worker-7 until ${expires} (lease ${held.body.leaseId}).`);
    const typo = await app.api.get('/api/dashboard/pop-preview?queue=w20.dyr&consumerGroup=g');
    expect(typo.body.why.text).toMatch(/^Queue "w20.dyr" does not exist/);
    expect(await app.db.query("select 1 from queen.queues where name = 'w20.dyr'")).toHaveLength(0); // still not created
    expect((await app.api.get('/api/dashboard/pop-preview?queue=w20.dry&partition=nope&consumerGroup=g')).body.why.text).toBe('Queue w20.dry has no partition "nope": nothing to claim there.');
  });

  it('the Overview counts a configured queue\'s partitions without its unused Default, as the database lists them', async () => {
    await app.api.post('/api/v1/configure', { queue: 'w20.default', options: {} });
    await pushMany(app.api, 'w20.default', 'p1', 1);
    await pushMany(app.api, 'w20.default', 'p2', 1);
    const [{ n }] = await app.db.query<any>(`select count(*)::int as n from queen.partitions p join queen.queues q on q.id = p.queue_id
      where q.name = 'w20.default' and not (p.name = 'Default' and p.head_offset = 0)`);
    const row = (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'w20.default');
    expect(row.partitions).toBe(n);
    expect(n).toBe(2);
    await pushMany(app.api, 'w20.default', 'Default', 1);
    expect((await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'w20.default').partitions).toBe(3);
  });

  it('forgets deliveries past DELIVERY_RETENTION_HOURS, but not one whose lease is still held', async () => {
    await pushMany(app.api, 'w20.forget', 'p', 2);
    const a = await app.api.get('/api/v1/pop/queue/w20.forget?consumerGroup=g&batch=1&leaseSeconds=600');
    await app.api.post('/api/v1/ack', { transactionId: 'p-0', partitionId: a.body.partitionId, consumerGroup: 'g', leaseId: a.body.leaseId });
    const b = await app.api.get('/api/v1/pop/queue/w20.forget?consumerGroup=g&batch=1&leaseSeconds=600');
    await app.db.query("update queen.deliveries set claimed_at = now() - interval '25 hours' where partition_id = $1", [a.body.partitionId]);
    const [{ n }] = await app.db.query<any>('select queen.forget_deliveries(24, 1000) as n');
    expect(n).toBeGreaterThanOrEqual(1);
    const left = await app.db.query<any>('select lease_id from queen.deliveries where partition_id = $1', [a.body.partitionId]);
    expect(left.map((d) => d.lease_id)).toEqual([b.body.leaseId]);
  });
});

describe('deadLetterAfterExpiries', () => {
  it('off by default: an expired lease redelivers forever; set to 2, the message goes to the dead letters at the claim after its 2nd expiry', async () => {
    const cfg = await app.api.post('/api/v1/configure', { queue: 'w20.expiries', options: { deadLetterAfterExpiries: 2 } });
    expect(cfg.body.options.deadLetterAfterExpiries).toBe(2);
    expect((await app.api.post('/api/v1/configure', { queue: 'w20.expiries-off', options: {} })).body.options.deadLetterAfterExpiries).toBe(0);
    for (const q of ['w20.expiries', 'w20.expiries-off']) await pushMany(app.api, q, 'p', 2);
    const claim = (q: string) => app.api.get(`/api/v1/pop/queue/${q}/partition/p?consumerGroup=g&batch=1&leaseSeconds=60`, as('crashing'));
    for (const q of ['w20.expiries', 'w20.expiries-off']) {
      const first = await claim(q);
      expect(first.body.messages[0].transactionId).toBe('p-0');
      await expire(first.body.leaseId);
      const second = await claim(q); // the 1st expiry: delivered again
      expect(second.body.messages[0].transactionId).toBe('p-0');
      await expire(second.body.leaseId);
    }
    // the 2nd expiry: dead-lettered at this claim, which delivers p-1
    expect((await claim('w20.expiries')).body.messages.map((m: any) => m.transactionId)).toEqual(['p-1']);
    expect((await claim('w20.expiries-off')).body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const dlq = await app.api.get('/api/v1/dlq?queue=w20.expiries');
    expect(dlq.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const [audit] = await app.db.query<any>("select actor, reason from queen.audit_log where action = 'message.dead_letter' and target like '%/p-0' order by id desc limit 1");
    expect(audit).toEqual({ actor: 'broker', reason: 'its lease expired 2 times (deadLetterAfterExpiries 2)' });
    expect((await app.api.get('/api/v1/dlq?queue=w20.expiries-off')).body.messages).toEqual([]);
    const [{ p }] = await app.db.query<any>("select p.id as p from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'w20.expiries' and p.name = 'p'");
    const ended = await app.db.query<any>('select ended from queen.deliveries where partition_id = $1 and from_offset = 1 order by id', [p]);
    expect(ended.map((d) => d.ended)).toEqual(['expired', 'expired']);
  });
});
