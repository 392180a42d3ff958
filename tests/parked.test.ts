// Parked long polls share their scope's claims (issue 18): one claim at a time for all the pops
// parked on a (queue, partition, group), in their order of arrival; a push wakes as many as it
// can feed and the rest stay parked; things that become claimable by time (a lease expiry,
// delayedProcessing, a pause's end) wake a waiter with no push and no re-check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep, type PopReply } from './support/broker';
import { client } from './support/http';
import { startServer, type TestServer } from './support/server';

// Re-checks every 10 s: inside these tests only a wake-up or a timer of the scope ends a wait early.
const SLOW_POLL = { POP_WAIT_INITIAL_INTERVAL_MS: '10000', POP_WAIT_MAX_INTERVAL_MS: '10000' };

type Api = ReturnType<typeof client>;
type Facts = {
  parkedPolls: number;
  parkedScopes: number;
  wakeUps: Record<string, number>;
  parkedClaims: number;
  parkedServed: number;
  rechecks: number;
  recheckedScopes: number;
};

const facts = async (api: Api): Promise<Facts> => (await api.get('/api/dashboard/process')).body;

/** Polls `check` until it holds (the tests' own cap is the test timeout, never a duration asserted). */
async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await sleep(10);
}

interface Parked {
  index: number;
  reply?: PopReply;
  promise: Promise<PopReply>;
}

/** Parks `n` pops one after another, each only once the previous one is parked: their order of arrival is known. */
async function parkInOrder(
  api: Api,
  queue: string,
  n: number,
  params: Record<string, string | number | boolean>,
  already = 0,
): Promise<Parked[]> {
  const parked: Parked[] = [];
  for (let i = 0; i < n; i++) {
    const p: Parked = { index: i } as Parked;
    p.promise = popQueue(api, queue, { wait: true, timeout: 60000, ...params }).then((r) => (p.reply = r));
    parked.push(p);
    await until(async () => (await facts(api)).parkedPolls >= already + i + 1);
  }
  return parked;
}

const answered = (parked: Parked[]) => parked.filter((p) => p.reply !== undefined);

describe('parked long polls share their scope', () => {
  let app: TestApp;
  let second: TestServer;
  beforeAll(async () => {
    app = await startApp({ ...SLOW_POLL, DB_POOL_SIZE: '5' });
    second = await startServer(app.db.url, SLOW_POLL);
  });
  afterAll(async () => {
    await second?.stop();
    await app?.stop();
  });

  it('200 parked on one scope: pushes of 1, 10 and 150 are each answered by as many waiters, first come first served, and the rest stay parked without queries', async () => {
    const q = 'pk.fifo';
    const before = await facts(app.api);
    const parked = await parkInOrder(app.api, q, 200, { autoAck: true, batch: 1 });
    const parkedFacts = await facts(app.api);
    // Parking 200 behind a scope found dry cost a handful of claims, not one (or more) per pop.
    expect(parkedFacts.parkedClaims - before.parkedClaims).toBeLessThan(10);
    expect(parkedFacts.parkedScopes).toBe(1);

    let seq = 0;
    for (const n of [1, 10, 150]) {
      await pushMany(app.api, q, 'p', n, 'm', seq);
      seq += n;
      await until(() => answered(parked).length >= seq);
      // Exactly that many answered, and the rest still parked: none woken empty-handed.
      await sleep(200);
      expect(answered(parked)).toHaveLength(seq);
      expect((await facts(app.api)).parkedPolls).toBe(200 - seq);
    }
    // In order of arrival: the k-th parked pop got the k-th message, each message once.
    for (const p of answered(parked)) {
      expect(p.reply!.status).toBe(200);
      expect(p.reply!.body.messages.map((m: any) => m.data.seq)).toEqual([p.index]);
    }
    expect(
      answered(parked)
        .map((p) => p.index)
        .sort((a, b) => a - b),
    ).toEqual([...Array(161).keys()]);

    // No waiter is starved: the last 39 get the next 39 messages, in order.
    await pushMany(app.api, q, 'p', 39, 'm', seq);
    await Promise.all(parked.map((p) => p.promise));
    for (const p of parked) expect(p.reply!.body.messages.map((m: any) => m.data.seq)).toEqual([p.index]);
    const after = await facts(app.api);
    expect(after.parkedPolls).toBe(0);
    // A push wakes the scope once and its claims serve many: far fewer claims than pops served.
    expect(after.parkedClaims - before.parkedClaims).toBeLessThan(40);
  }, 120_000);

  it('each message once per group: two groups parked on one queue each get every message once', async () => {
    const q = 'pk.groups';
    const a = await parkInOrder(app.api, q, 20, { autoAck: true, batch: 1, consumerGroup: 'ga' });
    const b = await parkInOrder(app.api, q, 20, { autoAck: true, batch: 1, consumerGroup: 'gb' }, 20);
    expect((await facts(app.api)).parkedScopes).toBe(2);
    await pushMany(app.api, q, 'p', 12, 'm');
    await until(() => answered(a).length === 12 && answered(b).length === 12);
    await sleep(200);
    for (const group of [a, b]) {
      expect(answered(group)).toHaveLength(12);
      expect(
        answered(group)
          .flatMap((p) => p.reply!.body.messages.map((m: any) => m.data.seq))
          .sort((x, y) => x - y),
      ).toEqual([...Array(12).keys()]);
      for (const p of answered(group)) expect(p.index).toBeLessThan(12); // the first twelve of each group
    }
    await pushMany(app.api, q, 'p', 8, 'm', 12);
    await Promise.all([...a, ...b].map((p) => p.promise));
  }, 60_000);

  it('waiters on two instances: a push on one is shared by the parked pops of both, each message once', async () => {
    const q = 'pk.two';
    const other = client(second.url);
    const here = await parkInOrder(app.api, q, 30, { autoAck: true, batch: 1 });
    const there = await parkInOrder(other, q, 30, { autoAck: true, batch: 1 });
    const otherBefore = await facts(other);
    const items = Array.from({ length: 60 }, (_, i) => ({ queue: q, partition: `p${i % 4}`, payload: { seq: i } }));
    expect((await app.api.push(items)).status).toBe(201);
    const replies = await Promise.all([...here, ...there].map((p) => p.promise));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const seqs = replies.flatMap((r) => r.body.messages.map((m: any) => m.data.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual([...Array(60).keys()]);
    const otherAfter = await facts(other);
    expect((otherAfter.wakeUps.push ?? 0) - (otherBefore.wakeUps.push ?? 0)).toBeGreaterThan(0);
    expect(otherAfter.parkedServed - otherBefore.parkedServed).toBe(30);
  }, 60_000);

  // The waiters' timeouts (6 s) are shorter than the re-check interval (10 s): an answer with
  // messages can only come from the scope's timer, armed at the moment the database named.
  it('a lease expiry wakes a parked pop with no push', async () => {
    const q = 'pk.lease';
    await pushMany(app.api, q, 'p', 1);
    const first = await popQueue(app.api, q, { batch: 1, leaseSeconds: 1 });
    expect(first.status).toBe(200);
    const timersBefore = (await facts(app.api)).wakeUps.timer ?? 0;
    const r = await popQueue(app.api, q, { wait: true, timeout: 6000, batch: 1 });
    expect(r.status).toBe(200);
    expect(r.body.messages.map((m: any) => m.id)).toEqual(first.body.messages.map((m: any) => m.id));
    expect((await facts(app.api)).wakeUps.timer ?? 0).toBeGreaterThan(timersBefore);
  });

  it('a delayedProcessing message wakes a parked pop when its delay has passed, with no push', async () => {
    const q = 'pk.delayed';
    await app.api.post('/api/v1/configure', { queue: q, options: { delayedProcessing: 2 } });
    const pushedAt = Date.now();
    await pushMany(app.api, q, 'p', 1);
    const timersBefore = (await facts(app.api)).wakeUps.timer ?? 0;
    const r = await popQueue(app.api, q, { wait: true, timeout: 6000, batch: 1, autoAck: true });
    const answeredAt = Date.now();
    expect(r.status).toBe(200);
    expect(r.body.messages).toHaveLength(1);
    expect(answeredAt).toBeGreaterThanOrEqual(pushedAt + 2000); // not before its delay
    expect((await facts(app.api)).wakeUps.timer ?? 0).toBeGreaterThan(timersBefore);
  });

  it('the end of a pause wakes a parked pop, with no push and no resume', async () => {
    const q = 'pk.pause';
    await pushMany(app.api, q, 'p', 1);
    const [{ id }] = await app.db.query<{ id: string }>(
      "select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = 'p'",
      [q],
    );
    const until = Date.now() + 1500;
    const paused = await app.api.post(`/api/v1/cursors/${id}/__QUEUE_MODE__/pause`, {
      paused: true,
      until: new Date(until).toISOString(),
    });
    expect(paused.status).toBe(200);
    const timersBefore = (await facts(app.api)).wakeUps.timer ?? 0;
    const r = await popQueue(app.api, q, { wait: true, timeout: 6000, batch: 1, autoAck: true });
    const answeredAt = Date.now();
    expect(r.status).toBe(200);
    expect(r.body.messages).toHaveLength(1);
    expect(answeredAt).toBeGreaterThanOrEqual(until); // not before the pause ends
    expect((await facts(app.api)).wakeUps.timer ?? 0).toBeGreaterThan(timersBefore);
  });

  it('/metrics/prometheus shows parked polls per scope, wake-ups and claims', async () => {
    const q = 'pk.metrics';
    const parked = await parkInOrder(app.api, q, 3, { autoAck: true, batch: 1, consumerGroup: 'gm' });
    const text = (await app.api.get('/metrics/prometheus')).text;
    expect(text).toMatch(
      /queen_parked_pops_by_scope\{queue="pk\.metrics",partition="",namespace="",task="",consumer_group="gm"\} 3/,
    );
    expect(text).toMatch(/queen_parked_wakeups_total\{reason="entry"\} \d+/);
    expect(text).toMatch(/queen_parked_claims_total \d+/);
    expect(text).toMatch(/queen_parked_served_per_wakeup [\d.]+/);
    await pushMany(app.api, q, 'p', 3, 'm');
    await Promise.all(parked.map((p) => p.promise));
  });
});

describe('the instance-wide re-check', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp(); // the contract's intervals: 100 ms, backing off to 1 s
  });
  afterAll(() => app?.stop());

  it('checks every dry scope in shared statements, and finds what no wake-up announced', async () => {
    const parked: Parked[] = [];
    for (let i = 0; i < 20; i++)
      parked.push(...(await parkInOrder(app.api, `pk.rc.${i}`, 1, { autoAck: true, batch: 1 }, i)));
    const start = await facts(app.api);
    expect(start.parkedScopes).toBe(20);
    await until(async () => (await facts(app.api)).rechecks >= start.rechecks + 5); // the backoff grows
    const grown = await facts(app.api);
    await until(async () => (await facts(app.api)).rechecks >= grown.rechecks + 3);
    const f = await facts(app.api);
    // Several scopes per statement: the re-checks do not grow with the scopes (nor the polls).
    expect((f.recheckedScopes - grown.recheckedScopes) / (f.rechecks - grown.rechecks)).toBeGreaterThanOrEqual(2);
    expect(f.parkedClaims).toBe(start.parkedClaims); // nothing claimable: the re-checks claimed nothing

    // A message stored behind the broker's back (no wake-up in process, no NOTIFY with one
    // instance): the re-check of its scope finds it.
    await app.db.query(`select count(*) from queen.push($1::jsonb)`, [
      JSON.stringify([
        { queue: 'pk.rc.7', partition: 'Default', payload: { seq: 7 }, transactionId: 'behind-the-back' },
      ]),
    ]);
    await parked[7].promise;
    expect(parked[7].reply!.status).toBe(200);
    expect(parked[7].reply!.body.messages[0].data).toEqual({ seq: 7 });
    expect((await facts(app.api)).wakeUps.recheck ?? 0).toBeGreaterThan(start.wakeUps.recheck ?? 0);
    for (let i = 0; i < 20; i++) if (i !== 7) await pushMany(app.api, `pk.rc.${i}`, 'p', 1);
    await Promise.all(parked.map((p) => p.promise));
  }, 60_000);

  it('pop maintenance answers the parked polls of a dry scope at its next re-check', async () => {
    const parked = await parkInOrder(app.api, 'pk.maint', 3, { autoAck: true, batch: 1 });
    expect(
      (await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'parked test' })).status,
    ).toBe(200);
    try {
      const replies = await Promise.all(parked.map((p) => p.promise));
      expect(replies.map((r) => [r.status, r.empty])).toEqual([
        [204, 'maintenance'],
        [204, 'maintenance'],
        [204, 'maintenance'],
      ]);
    } finally {
      await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'parked test over' });
    }
  });
});
