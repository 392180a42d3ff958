// Shared by the fault scenarios: consumer processes, a producer that remembers what was accepted,
// and the invariants every scenario checks afterwards, from the database and from what the
// consumers saw.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { TestDatabase } from '../support/db';

export interface Claim {
  t: 'claim';
  name: string;
  requestedAt: number;
  receivedAt: number;
  leaseId: string;
  messages: { partition: string; seq: number; transactionId: string; partitionId: string }[];
}
type Line =
  | Claim
  | { t: 'acking'; name: string; at: number; leaseId: string }
  | { t: 'acked'; name: string; at: number; leaseId: string; ok: boolean };

/** A consumer process (tests/faults/consumer.mjs) writing what it sees to `log`. */
export function startConsumer(
  base: string,
  queue: string,
  group: string,
  log: string,
  { autoAck = false, leaseSeconds = 2, workMs = 0 } = {},
): ChildProcess {
  return spawn(
    process.execPath,
    [
      path.join(__dirname, 'consumer.mjs'),
      base,
      queue,
      group,
      log,
      autoAck ? '1' : '0',
      String(leaseSeconds),
      String(workMs),
    ],
    {
      stdio: 'ignore',
    },
  );
}

export function readLog(log: string): Line[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Line];
      } catch {
        return []; // a line cut by a SIGKILL
      }
    });
}

/** Pushes `perPartition` messages to each partition, payload {seq}, transaction ids `${queue}/p/seq`. */
export async function pushAll(base: string, queue: string, partitions: number, perPartition: number) {
  const items = [];
  for (let p = 0; p < partitions; p++)
    for (let seq = 0; seq < perPartition; seq++)
      items.push({ queue, partition: `p${p}`, payload: { seq }, transactionId: `${queue}/p${p}/${seq}` });
  for (let i = 0; i < items.length; i += 500) {
    const res = await fetch(`${base}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: items.slice(i, i + 500) }),
    });
    expect(res.status).toBe(201);
  }
  return items.length;
}

/** Every (partition, group) of the queue committed up to its head. */
export async function allCommitted(db: TestDatabase, queue: string, groups: string[]): Promise<boolean> {
  const [r] = await db.query<{ behind: number; cursors: number }>(
    `
    select count(*) filter (where c.committed_offset < p.head_offset)::int as behind, count(*)::int as cursors
    from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
    where q.name = $1 and c.consumer_group = any($2::text[])`,
    [queue, groups],
  );
  return r.cursors > 0 && r.behind === 0;
}

/**
 * The promises, checked after a scenario (with allCommitted for "committed"): for each leased
 * group, every message delivered at least once, first deliveries in offset order per partition,
 * never two live leases on one (partition, group); for an autoAck group, no message delivered
 * twice; every accepted message stored, nothing stored twice.
 */
export async function checkInvariants(
  db: TestDatabase,
  queue: string,
  opts: {
    leased: { group: string; log: string; leaseSeconds: number }[];
    autoAck?: { group: string; log: string }[];
    expected: number;
  },
) {
  const [stored] = await db.query<{ n: number; distinct: number }>(
    `
    select count(*)::int as n, count(distinct (m.partition_id, m.transaction_id))::int as distinct
    from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1`,
    [queue],
  );
  expect(stored.n, 'nothing stored twice').toBe(stored.distinct);
  expect(stored.n, 'every accepted message stored').toBe(opts.expected);

  for (const { group, log, leaseSeconds } of opts.leased) {
    const lines = readLog(log);
    const claims = lines.filter((l): l is Claim => l.t === 'claim');
    const ackSent = new Map<string, number>();
    for (const l of lines) if (l.t === 'acking') ackSent.set(`${l.name}/${l.leaseId}`, l.at);
    // delivered at least once (what the consumers saw); committed is the database's word (allCommitted):
    // a consumer killed after its ack reached the broker never wrote that it did
    const delivered = new Set(claims.flatMap((c) => c.messages.map((m) => m.transactionId)));
    expect(delivered.size, `${group}: every message delivered`).toBe(opts.expected);

    // first deliveries in offset order, per partition
    const firstSeen = new Map<string, number[]>();
    const seen = new Set<string>();
    for (const c of [...claims].sort((a, b) => a.receivedAt - b.receivedAt)) {
      for (const m of c.messages) {
        if (seen.has(m.transactionId)) continue;
        seen.add(m.transactionId);
        firstSeen.set(m.partition, [...(firstSeen.get(m.partition) ?? []), m.seq]);
      }
    }
    for (const [partition, seqs] of firstSeen)
      expect(seqs, `${group}/${partition}: first deliveries in order`).toEqual([...seqs].sort((a, b) => a - b));

    // never two live leases on one (partition, group)
    const byPartition = new Map<string, Claim[]>();
    for (const c of claims)
      for (const p of new Set(c.messages.map((m) => m.partition)))
        byPartition.set(p, [...(byPartition.get(p) ?? []), c]);
    const overlaps: string[] = [];
    for (const [partition, list] of byPartition) {
      for (const a of list) {
        // a's lease is certainly live from when a received it until it sent its ack, and not
        // past its expiry (granted after a.requestedAt): a slow consumer's lease may expire first
        const end = Math.min(ackSent.get(`${a.name}/${a.leaseId}`) ?? Infinity, a.requestedAt + leaseSeconds * 1000);
        for (const b of list) {
          if (b !== a && b.requestedAt > a.receivedAt && b.receivedAt < end)
            overlaps.push(`${group}/${partition}: ${b.name} claimed while ${a.name} held it`);
        }
      }
    }
    expect(overlaps, `${group}: one live lease per partition`).toEqual([]);
  }

  for (const { group, log } of opts.autoAck ?? []) {
    const delivered = readLog(log)
      .filter((l): l is Claim => l.t === 'claim')
      .flatMap((c) => c.messages.map((m) => m.transactionId));
    expect(delivered.length, `${group}: autoAck never twice`).toBe(new Set(delivered).size);
  }
}

/** Waits until `done()` holds (checking every 200 ms), up to `ms`. */
export async function until(done: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > ms) throw new Error(`not done within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return Date.now() - started;
}

export function report(scenario: string, facts: Record<string, string | number>) {
  console.log(
    `[faults] ${scenario}: ${Object.entries(facts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
}
