// Several concurrent consumers in two groups over many partitions: every message reaches every
// group, never two live leases on one (partition, group), order kept per partition, nothing lost
// when consumers vanish mid-batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

const PARTITIONS = 8;
const PER_PARTITION = 300;
const LEASE_SECONDS = 3;

interface Holding {
  consumer: string;
  requestedAt: number;
  vanished: boolean;
}

describe('concurrent consumers', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
    for (let p = 0; p < PARTITIONS; p++) await pushMany(app.api, 'conc', `p${p}`, PER_PARTITION);
  });
  afterAll(() => app.stop());

  it('deliver every message to every group, in order, one live lease per (partition, group), surviving vanished consumers', async () => {
    // Per (group, partition), every claim in the order it happened: its seqs and whether its ack succeeded.
    const claims = new Map<string, { seqs: number[]; acked: boolean }[]>();
    const holding = new Map<string, Holding>();
    const violations: string[] = [];
    let vanishedBatches = 0;
    const finished = (group: string) =>
      Array.from({ length: PARTITIONS }, (_, p) => {
        const last = claims.get(`${group}/p${p}`)?.at(-1);
        return last?.acked && last.seqs.at(-1) === PER_PARTITION - 1;
      }).every(Boolean);

    async function consumer(group: string, name: string, vanishAfter: number | null) {
      let batches = 0;
      const deadline = Date.now() + 100_000;
      while (!finished(group) && Date.now() < deadline) {
        const requestedAt = Date.now();
        const r = await popQueue(app.api, 'conc', {
          consumerGroup: group,
          batch: 1 + Math.floor(Math.random() * 40),
          partitions: 1 + Math.floor(Math.random() * 3),
          leaseSeconds: LEASE_SECONDS,
        });
        if (r.status === 204) {
          await sleep(20);
          continue;
        }
        expect(r.status).toBe(200);
        const receivedAt = Date.now();
        const mine = new Map<string, { seqs: number[]; acked: boolean }>();
        for (const m of r.body.messages) {
          const key = `${group}/${m.partition}`;
          if (!mine.has(key)) mine.set(key, { seqs: [], acked: false });
          mine.get(key)!.seqs.push(m.data.seq);
        }
        for (const [key, claim] of mine) {
          const held = holding.get(key);
          // A lease is created after its pop was requested and lives LEASE_SECONDS: until then no one else may claim.
          if (held && (!held.vanished || receivedAt < held.requestedAt + LEASE_SECONDS * 1000)) {
            violations.push(`${key} claimed by ${name} while ${held.consumer} held it`);
          }
          holding.set(key, { consumer: name, requestedAt, vanished: false });
          claims.set(key, [...(claims.get(key) ?? []), claim]);
        }
        batches++;
        if (vanishAfter !== null && batches === vanishAfter) {
          for (const key of mine.keys()) holding.get(key)!.vanished = true;
          vanishedBatches++;
          return; // gone mid-batch, without acking
        }
        for (const key of mine.keys()) holding.delete(key); // the ack below releases it
        const acked = await app.api.post('/api/v1/ack/batch', {
          consumerGroup: group,
          acknowledgments: r.body.messages.map((m: any) => ({
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            leaseId: m.leaseId,
          })),
        });
        for (const [key, claim] of mine) {
          claim.acked = acked.body
            .filter((a: any) => `${group}/${a.partitionName}` === key)
            .every((a: any) => a.success);
        }
      }
    }

    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => consumer('alpha', `alpha-${i}`, i < 2 ? 3 + i : null)),
      ...Array.from({ length: 3 }, (_, i) => consumer('beta', `beta-${i}`, i === 0 ? 2 : null)),
    ]);

    expect(violations).toEqual([]);
    expect(vanishedBatches).toBe(3);
    for (const group of ['alpha', 'beta']) expect(finished(group), group).toBe(true);

    // Order: each claim is contiguous and starts just past the last acked one (or repeats an unacked one).
    for (const [key, list] of claims) {
      let expectedStart = 0;
      for (const claim of list) {
        expect(claim.seqs, key).toEqual(claim.seqs.map((_, i) => expectedStart + i));
        if (claim.acked) expectedStart = claim.seqs.at(-1)! + 1;
      }
      expect(expectedStart, key).toBe(PER_PARTITION);
    }

    const cursors = await app.db.query<{
      consumer_group: string;
      committed: number;
      lease_id: string | null;
      expiries: number;
    }>(
      `select c.consumer_group, c.committed_offset::int as committed, c.lease_id, c.lease_expiries::int as expiries
       from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'conc' order by 1`,
    );
    expect(cursors).toHaveLength(PARTITIONS * 2);
    expect(cursors.every((c) => c.committed === PER_PARTITION && c.lease_id === null)).toBe(true);
    expect(cursors.reduce((n, c) => n + c.expiries, 0)).toBeGreaterThanOrEqual(3); // the vanished batches came back
  }, 180_000);
});
