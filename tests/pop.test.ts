// Pops beyond the contract's sections (pop-conformance.test.ts): discovery of a queue created while a
// consumer waits, long partition names while notifications go out, subscriptionFrom=now on the
// database's clock, why an empty pop is empty, and the console's dry run.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { partitionIdsOf, pop, popQueue, pushMany, sleep } from './support/broker';
import { client } from './support/http';
import { startServer } from './support/server';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
const partitionIds = (queue: string) => partitionIdsOf(app.api, queue);

describe('discovery and subscriptions', () => {
  it('a discovery consumer subscribed with `new` gets the first messages of a queue created after it parked', async () => {
    const parked = pop(app.api, '', {
      namespace: 'later',
      consumerGroup: 'scoped',
      subscriptionMode: 'new',
      wait: true,
      timeout: 8000,
    });
    await sleep(600);
    expect(
      (await app.api.push([{ queue: 'later.born', partition: 'p', payload: { first: true }, transactionId: 'born-1' }]))
        .status,
    ).toBe(201);
    const r = await parked;
    expect(r.status).toBe(200);
    expect(r.body.messages.map((m: any) => m.transactionId)).toEqual(['born-1']);
    // A second queue of the scope, created while nobody waits: its first message is not skipped either.
    await app.api.push([{ queue: 'later.second', partition: 'p', payload: 1, transactionId: 'second-1' }]);
    const again = await pop(app.api, '', {
      namespace: 'later',
      consumerGroup: 'scoped',
      subscriptionMode: 'new',
      batch: 10,
    });
    expect(again.body.messages.map((m: any) => m.transactionId)).toEqual(['second-1']);
  });

  it("subscriptionFrom=now is the database's now, whatever the app server's clock says; times without a zone are refused", async () => {
    const skewed = await startServer(app.db.url, {
      NODE_OPTIONS: `--require ${path.join(__dirname, 'support', 'skewed-clock.cjs')}`,
      TEST_CLOCK_SKEW_MS: String(3600_000),
    });
    try {
      const api = client(skewed.url);
      expect((await popQueue(api, 'd5.q', { consumerGroup: 'skewed', subscriptionFrom: 'now' })).status).toBe(204);
      await pushMany(api, 'd5.q', 'p', 1, 'd5');
      const r = await popQueue(api, 'd5.q', { consumerGroup: 'skewed' });
      expect(r.status).toBe(200);
      expect(r.body.messages[0].transactionId).toBe('d5-0');
      const sub = await api.post('/api/v1/consumer-groups/later-sub/subscription', {
        queue: 'd5.q',
        subscriptionFrom: 'now',
      });
      const [row] = await app.db.query<{ drift: number }>(
        `select abs(extract(epoch from start_at - now()))::float8 as drift from queen.subscriptions s join queen.queues q on q.id = s.queue_id
         where q.name = 'd5.q' and s.consumer_group = 'later-sub'`,
      );
      expect(sub.status).toBe(200);
      expect(row.drift).toBeLessThan(60);
    } finally {
      await skewed.stop();
    }
    const noZone = await app.api.post('/api/v1/consumer-groups/x/subscription', {
      queue: 'd5.q',
      subscriptionFrom: '2026-01-01T00:00:00',
    });
    expect(noZone.status).toBe(400);
    expect(noZone.body.error).toMatch(/^subscriptionFrom: .*zone/);
    const five = await app.api.post('/api/v1/consumer-groups/g/queues/d5.q/seek', { timestamp: '5' });
    expect(five.status).toBe(400);
    expect(five.body.error).toMatch(/timestamp/);
  });
});

describe('names', () => {
  it('partitions with long non-ASCII names: pushes and multi-partition pops work while notifications are sent', async () => {
    const controller = new AbortController();
    const live = await fetch(`${app.server.url}/api/v1/events`, { signal: controller.signal }); // a live view: events are sent
    const reader = live.body!.getReader();
    await reader.read(); // the stream is open: every instance knows
    try {
      const short = '分区'.repeat(10); // 20 characters, 60 bytes
      const items = Array.from({ length: 150 }, (_, i) => ({
        queue: 'd4.push',
        partition: `${short}${i}`,
        payload: i,
      }));
      const pushed = await app.api.push(items);
      expect(pushed.status).toBe(201);
      const long = '分区'.repeat(30); // 60 characters, 180 bytes
      await app.api.push(
        Array.from({ length: 30 }, (_, i) => ({ queue: 'd4.pop', partition: `${long}${i}`, payload: i })),
      );
      const r = await popQueue(app.api, 'd4.pop', { partitions: 0, batch: 100 });
      expect(r.status).toBe(200);
      expect(r.body.partitionsClaimed).toBe(30);
    } finally {
      controller.abort();
    }
  });
});

describe('an empty pop says why', () => {
  it('paused: the partition asked for is paused, or every pending partition is paused or leased; else idle; always a bare 204', async () => {
    for (const p of ['x', 'y']) await pushMany(app.api, 'f8.paused', p, 1);
    const ids = await partitionIds('f8.paused');
    await app.api.post(`/api/v1/cursors/${ids.x}/g/pause`, { paused: true, reason: 'poison' });

    const one = await pop(app.api, '/queue/f8.paused/partition/x', { consumerGroup: 'g' });
    expect([one.status, one.empty, one.text]).toEqual([204, 'paused', '']);
    const y = await popQueue(app.api, 'f8.paused', { consumerGroup: 'g' });
    expect(y.body.messages.map((m: any) => m.partition)).toEqual(['y']); // not everything is paused
    const rest = await popQueue(app.api, 'f8.paused', { consumerGroup: 'g' });
    expect([rest.status, rest.empty, rest.text]).toEqual([204, 'paused', '']); // x paused, y leased
    const preview = await app.api.get('/api/dashboard/pop-preview?queue=f8.paused&consumerGroup=g');
    expect(preview.body).toMatchObject({ status: 204, empty: 'paused' });

    expect((await popQueue(app.api, 'f8.paused', { consumerGroup: 'other', partitions: 0 })).status).toBe(200);
    const drained = await popQueue(app.api, 'f8.paused', { consumerGroup: 'other' });
    expect([drained.status, drained.empty]).toEqual([204, 'leased']); // other group: nothing paused, all leased
    await app.api.post(`/api/v1/cursors/${ids.x}/g/pause`, { paused: false, reason: 'fixed' });
    expect((await pop(app.api, '/queue/f8.paused/partition/x', { consumerGroup: 'g' })).status).toBe(200);
  });
});

describe('the dry run', () => {
  it('shows what a pop would claim with no lease id: its lease was rolled back and never existed', async () => {
    await pushMany(app.api, 'f8.dry', 'p', 2);
    const preview = await app.api.get('/api/dashboard/pop-preview?queue=f8.dry&consumerGroup=gd');
    expect(preview.body.status).toBe(200);
    expect(preview.body.body.leaseId).toBeNull();
    expect(preview.body.body.messages.map((m: any) => m.leaseId)).toEqual([null, null]);
    expect(await app.db.query("select 1 from queen.cursors where consumer_group = 'gd'")).toEqual([]);
  });

  it('a dry run says who holds the partitions until when, and that a misspelt queue does not exist', async () => {
    await pushMany(app.api, 'w20.dry', 'p', 2);
    const held = await app.api.get('/api/v1/pop/queue/w20.dry?consumerGroup=g&leaseSeconds=120', as('worker-7'));
    const dry = await app.api.get('/api/dashboard/pop-preview?queue=w20.dry&consumerGroup=g');
    expect(dry.body).toMatchObject({ status: 204, empty: 'leased' });
    const [{ expires }] = await app.db.query<any>(
      'select queen.iso(lease_expires_at) as expires from queen.cursors where lease_id = $1',
      [held.body.leaseId],
    );
    expect(dry.body.why.text).toBe(
      `Held by other leases of group g: p is leased by worker-7 until ${expires} (lease ${held.body.leaseId}).`,
    );
    const typo = await app.api.get('/api/dashboard/pop-preview?queue=w20.dyr&consumerGroup=g');
    expect(typo.body.why.text).toMatch(/^Queue "w20.dyr" does not exist/);
    expect(await app.db.query("select 1 from queen.queues where name = 'w20.dyr'")).toHaveLength(0); // still not created
    expect(
      (await app.api.get('/api/dashboard/pop-preview?queue=w20.dry&partition=nope&consumerGroup=g')).body.why.text,
    ).toBe('Queue w20.dry has no partition "nope": nothing to claim there.');
  });
});
