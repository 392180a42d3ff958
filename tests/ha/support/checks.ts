import { expect } from 'vitest';
import type { Load } from './load';

interface Db {
  query: <R extends Record<string, any> = Record<string, any>>(text: string, values?: unknown[]) => Promise<R[]>;
}

/**
 * What a scenario under load promises, from the database and from what the consumers saw: every
 * push answered 201 stored exactly once (nothing else stored), every group received every message
 * with first deliveries in offset order per partition, no lease left once the consumers stopped.
 */
export async function checkDelivery(db: Db, load: Load) {
  const queue = load.o.queue;
  const stored = await db.query<{ tx: string; n: number }>(
    `select m.transaction_id as tx, count(*)::int as n from queen.messages m
       join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
      where q.name = $1 group by 1`,
    [queue],
  );
  expect(
    stored.filter((r) => r.n > 1),
    'nothing stored twice',
  ).toEqual([]);
  const storedSet = new Set(stored.map((r) => r.tx));
  expect(
    [...load.accepted].filter((tx) => !storedSet.has(tx)),
    'every 201 stored',
  ).toEqual([]);
  // a push whose answer was lost (a failover) may be stored without a 201; its retry got the 201 or it was never retried
  expect(storedSet.size).toBeGreaterThanOrEqual(load.accepted.size);
  for (const group of load.o.groups) {
    const seen = load.delivered.get(group)!;
    expect(
      [...storedSet].filter((tx) => !seen.has(tx)),
      `${group}: every stored message delivered`,
    ).toEqual([]);
    for (const [partition, seqs] of load.firstDeliveries.get(group)!)
      expect(seqs, `${group}/${partition}: first deliveries in order`).toEqual([...seqs].sort((a, b) => a - b));
  }
  const leases = await db.query(
    `select c.consumer_group, c.lease_id from queen.cursors c join queen.queues q on q.id = c.queue_id
      where q.name = $1 and c.lease_id is not null and c.lease_expires_at > now()`,
    [queue],
  );
  expect(leases, 'no live lease once consumers stopped').toEqual([]);
}
