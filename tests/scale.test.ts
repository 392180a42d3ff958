// The claim path at the scale a partitioned queue exists for: 2,000 partitions, three groups (queue
// mode, a `new` subscription, an `all` group), consumers claiming one and five partitions at a
// time, consumers that walk away from their batches (their leases expire), pauses toggled while
// they run. Every message reaches every group exactly as the contract says, a (partition, group)
// never has two live leases, and service is fair.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, sleep } from './support/broker';

const QUEUE = 'scale.q';
const PARTITIONS = 2000;
const LEASE_SECONDS = 2;

async function pushWave(app: TestApp, partitions: number, perPartition: number, wave: number) {
  const items = [];
  for (let p = 0; p < partitions; p++) {
    for (let m = 0; m < perPartition; m++)
      items.push({ queue: QUEUE, partition: `p${p}`, payload: { wave, m }, transactionId: `w${wave}-p${p}-${m}` });
  }
  for (let i = 0; i < items.length; i += 1000) {
    const res = await app.api.push(items.slice(i, i + 1000));
    expect(res.status).toBe(201);
  }
  return items.map((i) => i.transactionId);
}

interface Claim {
  consumer: string;
  requestedAt: number;
  receivedAt: number;
  /** when its ack was sent (undefined: walked away) */
  releasedAt?: number;
}

describe('2,000 partitions, three groups', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('deliver every message to every group as the contract says, one live lease per (partition, group), paused partitions skipped', async () => {
    const firstWave = await pushWave(app, PARTITIONS, 2, 1);
    // `fresh` subscribes now: it must get exactly what is pushed from here on.
    expect((await popQueue(app.api, QUEUE, { consumerGroup: 'fresh', subscriptionMode: 'new' })).status).toBe(204);
    const secondWave = await pushWave(app, PARTITIONS / 2, 1, 2);
    const expected: Record<string, Set<string>> = {
      __QUEUE_MODE__: new Set([...firstWave, ...secondWave]),
      everything: new Set([...firstWave, ...secondWave]),
      fresh: new Set(secondWave),
    };

    const acked: Record<string, Set<string>> = { __QUEUE_MODE__: new Set(), everything: new Set(), fresh: new Set() };
    const unexpected: string[] = [];
    const violations: string[] = [];
    const claimsOf = new Map<string, Claim[]>(); // by group/partition
    const pausedWindows: { partition: string; from: number; to: number }[] = [];

    async function consumer(group: string, name: string, partitions: number, walkAwayEvery: number) {
      let batches = 0;
      const deadline = Date.now() + 150_000;
      while (acked[group].size < expected[group].size && Date.now() < deadline) {
        const requestedAt = Date.now();
        const r = await popQueue(app.api, QUEUE, {
          ...(group === '__QUEUE_MODE__' ? {} : { consumerGroup: group }),
          batch: 10,
          partitions,
          leaseSeconds: LEASE_SECONDS,
        });
        if (r.status === 204) {
          await sleep(50);
          continue;
        }
        expect(r.status).toBe(200);
        const receivedAt = Date.now();
        batches++;
        const walkAway = walkAwayEvery > 0 && batches % walkAwayEvery === 0;
        const claim: Claim = { consumer: name, requestedAt, receivedAt };
        const byPartition = new Map<string, any[]>();
        for (const m of r.body.messages) {
          if (!expected[group].has(m.transactionId)) unexpected.push(`${group} got ${m.transactionId}`);
          byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m]);
        }
        for (const [partition, messages] of byPartition) {
          const key = `${group}/${partition}`;
          const earlier = claimsOf.get(key) ?? [];
          for (const e of earlier) {
            // e's lease lived from (at the latest) e.receivedAt until its ack was sent, or for LEASE_SECONDS after e.requestedAt.
            const endedBy = e.releasedAt ?? e.requestedAt + LEASE_SECONDS * 1000;
            if (requestedAt > e.receivedAt && receivedAt < endedBy)
              violations.push(`${key}: ${name} claimed it while ${e.consumer} held it`);
          }
          claimsOf.set(key, [...earlier, claim]);
          // A batch is a contiguous span in order: the ids of one partition come in push order.
          const order = messages.map((m: any) => `${m.data.wave}.${m.data.m}`);
          expect(order, key).toEqual([...order].sort());
          for (const w of pausedWindows) {
            if (w.partition === partition && group === 'everything' && requestedAt > w.from && receivedAt < w.to) {
              violations.push(`${key} delivered while paused`);
            }
          }
        }
        if (walkAway) continue; // its lease expires and the batch comes back
        claim.releasedAt = Date.now();
        const res = await app.api.post('/api/v1/ack/batch', {
          consumerGroup: group === '__QUEUE_MODE__' ? null : group,
          acknowledgments: r.body.messages.map((m: any) => ({
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            leaseId: m.leaseId,
          })),
        });
        expect(res.status).toBe(200);
        res.body.forEach((a: any, i: number) => {
          if (a.success) acked[group].add(r.body.messages[i].transactionId);
        });
      }
    }

    async function pauses() {
      const ids = await app.db.query<{ id: string; name: string }>(
        `select p.id, p.name from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 order by p.name limit 5`,
        [QUEUE],
      );
      for (const p of ids) {
        const path = `/api/v1/cursors/${p.id}/everything/pause`;
        expect((await app.api.post(path, { paused: true, reason: 'test' })).status).toBe(200);
        const from = Date.now();
        await sleep(700);
        const to = Date.now();
        expect((await app.api.post(path, { paused: false, reason: 'test' })).status).toBe(200);
        pausedWindows.push({ partition: p.name, from, to });
      }
    }

    await Promise.all([
      ...['__QUEUE_MODE__', 'everything', 'fresh'].flatMap((group) => [
        consumer(group, `${group}-1a`, 1, 0),
        consumer(group, `${group}-1b`, 1, 25),
        consumer(group, `${group}-5a`, 5, 0),
        consumer(group, `${group}-5b`, 5, 40),
      ]),
      pauses(),
    ]);

    expect(unexpected).toEqual([]);
    expect(violations).toEqual([]);
    for (const group of Object.keys(expected)) expect(acked[group].size, group).toBe(expected[group].size);

    // The database agrees: every cursor at its partition's head, no lease left, no backlog left.
    const [left] = await app.db.query<{ behind: number; leases: number; backlog: number }>(
      `
      select (select count(*)::int from queen.cursors c join queen.partitions p on p.id = c.partition_id
              where c.queue_id = q.id and c.committed_offset < p.head_offset) as behind,
             (select count(*)::int from queen.cursors c where c.queue_id = q.id and c.lease_id is not null) as leases,
             (select count(*)::int from queen.backlog b where b.queue_id = q.id) as backlog
      from queen.queues q where q.name = $1`,
      [QUEUE],
    );
    expect(left).toEqual({ behind: 0, leases: 0, backlog: 0 });
    const expiries = await app.db.query<{ n: number }>(
      `select sum(lease_expiries)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1`,
      [QUEUE],
    );
    expect(expiries[0].n).toBeGreaterThan(0); // the walked-away batches came back through expiry
  }, 240_000);

  it('serve partitions fairly: a lone consumer cycles through every partition before serving one again', async () => {
    const items = [];
    for (let p = 0; p < 50; p++)
      for (let m = 0; m < 4; m++) items.push({ queue: 'scale.fair', partition: `f${p}`, payload: { m } });
    expect((await app.api.push(items)).status).toBe(201);
    const order: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await popQueue(app.api, 'scale.fair', { consumerGroup: 'fair', batch: 2 });
      expect(r.status).toBe(200);
      order.push(r.body.partition);
      const res = await app.api.post('/api/v1/ack/batch', {
        consumerGroup: 'fair',
        acknowledgments: r.body.messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
        })),
      });
      expect(res.body.every((a: any) => a.success)).toBe(true);
    }
    expect(new Set(order.slice(0, 50)).size).toBe(50);
    expect(new Set(order.slice(50)).size).toBe(50);
  });
});
