// Three app instances on one database, consumers spread across them: wake-ups, leases, pop
// maintenance, pauses and force releases must cross instances (docs/scaling.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany, type PopReply } from './support/broker';
import { client } from './support/http';
import { startServer, type TestServer } from './support/server';
import { allCommitted, checkInvariants, pushAll, report, startConsumer, until } from './faults/support';

// A parked pop re-checks on its own only after this long, so an answer well before it can only
// come from a wake-up; without NOTIFY the pops below would answer 204 at their timeout instead
// (a 200 is the proof: no test here measures how fast it came).
const RECHECK_MS = 30_000;
const POLL_TIMEOUT_MS = 10_000;
const slowRecheck = { POP_WAIT_INITIAL_INTERVAL_MS: String(RECHECK_MS), POP_WAIT_MAX_INTERVAL_MS: String(RECHECK_MS) };

type Api = ReturnType<typeof client>;

describe('three instances on one database', () => {
  let app: TestApp;
  let others: TestServer[];
  let a: Api, b: Api, c: Api;
  let dir: string;

  beforeAll(async () => {
    app = await startApp(slowRecheck);
    others = await Promise.all([startServer(app.db.url, slowRecheck), startServer(app.db.url, slowRecheck)]);
    [a, b, c] = [app.api, ...others.map((s) => client(s.url))];
    // every instance listening and seen by the others (queen.instances decides whether NOTIFY is sent)
    for (const api of [a, b, c])
      await until(async () => (await api.get('/metrics')).body.listener.connected === true, 10_000);
    await until(
      async () => (await app.db.query<{ n: number }>('select count(*)::int as n from queen.instances'))[0].n === 3,
      10_000,
    );
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-three-'));
  });
  afterAll(async () => {
    await Promise.all(others?.map((s) => s.stop()) ?? []);
    await app?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves once `api`'s instance has `n` pops parked. */
  const parked = (api: Api, n: number) => until(async () => (await api.get('/metrics')).body.parkedPops >= n, 5_000);

  /** A pop's reply with the time it came. */
  const answered = (popping: Promise<PopReply>) => popping.then((reply) => ({ reply, at: Date.now() }));

  it('a long poll parked on A, and a discovery poll parked on C, are woken by a push to B', async () => {
    const onA = answered(popQueue(a, 'three.wake', { consumerGroup: 'g', wait: true, timeout: POLL_TIMEOUT_MS }));
    const onC = answered(pop(c, '', { namespace: 'three', consumerGroup: 'd', wait: true, timeout: POLL_TIMEOUT_MS }));
    await parked(a, 1);
    await parked(c, 1);
    const pushedAt = Date.now();
    await pushMany(b, 'three.wake', 'p', 1);
    const [queuePop, discoveryPop] = await Promise.all([onA, onC]);
    for (const { reply } of [queuePop, discoveryPop]) {
      expect(reply.status).toBe(200);
      expect(reply.body.messages[0].data).toEqual({ seq: 0 });
    }
    const wakeMs = { 'queue pop on A': queuePop.at - pushedAt, 'discovery pop on C': discoveryPop.at - pushedAt };
    report('three instances, push to B', {
      ...Object.fromEntries(Object.entries(wakeMs).map(([k, v]) => [k, `answered ${v} ms later`])),
      'poll timeout': `${POLL_TIMEOUT_MS} ms`,
    });
  });

  it('consumers on all three instances: one live lease per (partition, group), every message delivered and acked once per group', async () => {
    const queue = 'three.leases';
    const groups = ['billing', 'audit'];
    const lease = 30; // never expires here: any redelivery would be a broken lease
    const expected = await pushAll(app.server.url, queue, 6, 20);
    const logs = Object.fromEntries(groups.map((g) => [g, path.join(dir, `${g}.log`)]));
    const consumers = groups.flatMap((g) =>
      [app.server, ...others].flatMap((s) =>
        [0, 1].map(() => startConsumer(s.url, queue, g, logs[g], { leaseSeconds: lease, workMs: 30 })),
      ),
    );
    try {
      const drainedMs = await until(() => allCommitted(app.db, queue, groups), 40_000);
      report('three instances, 12 consumers', {
        messages: expected,
        groups: groups.length,
        'drained in': `${drainedMs} ms`,
      });
    } finally {
      for (const consumer of consumers) consumer.kill('SIGKILL');
    }
    await checkInvariants(app.db, queue, {
      expected,
      leased: groups.map((g) => ({ group: g, log: logs[g], leaseSeconds: lease })),
    });
    const perGroup = await app.db.query(
      `
      select c.consumer_group as group, sum(c.deliveries)::int as delivered, sum(c.redeliveries)::int as redelivered,
             sum(c.lease_expiries)::int as expiries, count(c.lease_id)::int as "leasesLeft",
             (select sum(d.acked)::int from queen.delivery_stats d where d.queue_id = c.queue_id and d.consumer_group = c.consumer_group) as acked
      from queen.cursors c join queen.queues q on q.id = c.queue_id
      where q.name = $1 group by c.queue_id, c.consumer_group order by 1`,
      [queue],
    );
    expect(perGroup).toEqual(
      [...groups]
        .sort()
        .map((g) => ({ group: g, delivered: expected, redelivered: 0, expiries: 0, leasesLeft: 0, acked: expected })),
    );
  });

  it('pop maintenance turned on through C makes pops on A and B answer the bare 204; off again, they deliver', async () => {
    await pushMany(a, 'three.maintenance', 'p', 1);
    const turn = (enabled: boolean) =>
      c.post('/api/v1/system/maintenance/pop', { enabled, reason: 'three-instance drill' });
    expect((await turn(true)).status).toBe(200);
    try {
      for (const api of [a, b]) {
        const r = await popQueue(api, 'three.maintenance', { consumerGroup: 'g' });
        expect({ status: r.status, empty: r.empty, text: r.text }).toEqual({
          status: 204,
          empty: 'maintenance',
          text: '',
        });
      }
    } finally {
      expect((await turn(false)).status).toBe(200);
    }
    expect((await popQueue(a, 'three.maintenance', { consumerGroup: 'g' })).status).toBe(200);
  });

  it('a pause set through B makes pops on A and C skip that partition; resuming through B restores it', async () => {
    const queue = 'three.pause';
    for (const p of ['held', 'free']) await pushMany(a, queue, p, 1);
    const partitions: { id: string; name: string }[] = (await c.get(`/api/v1/resources/queues/${queue}`)).body
      .partitions;
    const held = partitions.find((p) => p.name === 'held')!.id;
    const pause = (paused: boolean) =>
      b.post(`/api/v1/cursors/${held}/g/pause`, { paused, reason: 'three-instance drill' });
    expect((await pause(true)).status).toBe(200);
    expect((await pop(a, `/queue/${queue}/partition/held`, { consumerGroup: 'g' })).status).toBe(204);
    const wildcard = await popQueue(c, queue, { consumerGroup: 'g', partitions: 0 });
    expect(wildcard.body.messages.map((m: any) => m.partition)).toEqual(['free']);
    expect((await pause(false)).status).toBe(200);
    const resumed = await pop(c, `/queue/${queue}/partition/held`, { consumerGroup: 'g' });
    expect(resumed.body.messages.map((m: any) => m.partition)).toEqual(['held']);
  });

  it("a force release through A frees the lease for a consumer parked on C; the old holder's ack through B is refused", async () => {
    const queue = 'three.release';
    await pushMany(a, queue, 'p', 2);
    const old = await popQueue(b, queue, { consumerGroup: 'g', leaseSeconds: 60 });
    expect(old.status).toBe(200);
    const onC = answered(popQueue(c, queue, { consumerGroup: 'g', wait: true, timeout: POLL_TIMEOUT_MS }));
    await parked(c, 1);
    const releasedAt = Date.now();
    const released = await a.post(`/api/v1/leases/${old.body.leaseId}/release`, { reason: 'worker hung' });
    expect(released.body).toMatchObject({ released: true, leaseId: old.body.leaseId });
    const { reply: taken, at } = await onC;
    expect(taken.status).toBe(200);
    expect(taken.body.leaseId).not.toBe(old.body.leaseId);
    expect(taken.body.messages.map((m: any) => m.transactionId)).toEqual(
      old.body.messages.map((m: any) => m.transactionId),
    );
    report('three instances, release through A', { 'poll on C answered': `${at - releasedAt} ms later` });
    const refused = await ackAll(b, old);
    expect(refused.map((r) => r.error)).toEqual(['Invalid or expired lease', 'Invalid or expired lease']);
    expect((await ackAll(c, taken)).every((r) => r.success)).toBe(true);
  });
});
