// Exactly-once under concurrency (spec/streams.md, "Exactly-once and leases"): several workers of
// one streaming query on many partitions, short leases that expire, workers that die before their
// cycle, mid-cycle (request cut off, then maybe retried as the SDK retries) or that commit after
// their lease ran out. Every source message must count once in the state and once in the sink.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const PARTITIONS = 6;
const PER_PARTITION = 30;
const WORKERS = 4;
const GROUP = 'streams.conc';

/** A deterministic pseudo-random sequence, so that a failing run can be replayed. */
function random(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

it('counts every source message exactly once in the state and in the sink', { timeout: 90_000 }, async () => {
  const reg = await app.api.post('/streams/v1/queries', {
    name: 'conc',
    source_queue: 'conc.src',
    sink_queue: 'conc.sink',
    config_hash: 'c'.repeat(64),
  });
  expect(reg.status).toBe(200);
  const queryId = reg.body.query_id;
  for (let p = 0; p < PARTITIONS; p++) await pushMany(app.api, 'conc.src', `p${p}`, PER_PARTITION, `p${p}`);
  const total = PARTITIONS * PER_PARTITION;

  const committed = async () =>
    (
      await app.db.query<{ n: number }>(
        `select coalesce(sum(c.committed_offset), 0)::int as n from queen.cursors c
       join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'conc.src' and c.consumer_group = $1`,
        [GROUP],
      )
    )[0].n;

  const outcomes = { committed: 0, refused: 0, abandoned: 0, cut: 0, late: 0, retried: 0 };
  const deadline = Date.now() + 75_000;

  async function worker(id: number) {
    const rnd = random(id + 1);
    while (Date.now() < deadline) {
      const popped = await popQueue(app.api, 'conc.src', { consumerGroup: GROUP, batch: 5, leaseSeconds: 1 });
      if (popped.status === 204) {
        if ((await committed()) >= total) return;
        await sleep(100);
        continue;
      }
      expect(popped.status).toBe(200);
      // as the SDKs do: sort by (createdAt, id), ack the last as covering the batch
      const messages = [...popped.body.messages].sort(
        (a: any, b: any) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : 1),
      );
      const partitionId = popped.body.partitionId;
      const state = await app.api.post('/streams/v1/state/get', {
        query_id: queryId,
        partition_id: partitionId,
        keys: ['seen', 'count'],
      });
      const byKey = Object.fromEntries(state.body.rows.map((r: any) => [r.key, r.value]));
      const seen: number[] = [...(byKey.seen ?? []), ...messages.map((m: any) => m.data.seq)];
      const body = {
        query_id: queryId,
        partition_id: partitionId,
        consumer_group: GROUP,
        state_ops: [
          { type: 'upsert', key: 'seen', value: seen },
          { type: 'upsert', key: 'count', value: (byKey.count ?? 0) + messages.length },
        ],
        // no transactionId: a sink message pushed twice would show as two
        push_items: messages.map((m: any) => ({
          queue: 'conc.sink',
          partition: 'out',
          payload: { from: popped.body.partition, seq: m.data.seq },
        })),
        ack: { transactionId: messages[messages.length - 1].transactionId, leaseId: popped.body.leaseId },
      };
      const r = rnd();
      if (r < 0.1) {
        outcomes.abandoned++; // died before its cycle: the lease expires and the span comes back
        continue;
      }
      if (r < 0.2) {
        outcomes.late++; // stalled past its lease, then commits: refused, or beaten by another worker
        await sleep(1100 + rnd() * 300);
      }
      if (r >= 0.2 && r < 0.3) {
        outcomes.cut++; // killed mid-cycle: the request goes out, the answer never comes back
        const abort = new AbortController();
        const sent = app.api.post('/streams/v1/cycle', body, { signal: abort.signal }).catch(() => undefined);
        await sleep(rnd() * 15);
        abort.abort();
        await sent;
        if (rnd() < 0.5) {
          outcomes.retried++; // the SDK's retry after a lost response: refused if the first one committed
          const again = await app.api.post('/streams/v1/cycle', body);
          expect(again.status).toBe(200);
        }
        continue;
      }
      const res = await app.api.post('/streams/v1/cycle', body);
      expect(res.status).toBe(200);
      if (res.body.success) outcomes.committed++;
      else {
        outcomes.refused++;
        expect(['Invalid or expired lease', 'Message already acknowledged']).toContain(res.body.error);
      }
    }
  }

  await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)));
  expect(await committed()).toBe(total);
  expect(outcomes.committed).toBeGreaterThan(0);

  const state = await app.db.query<{ partition: string; key: string; value: any }>(
    `select p.name as partition, s.key, s.value from queen_streams.state s join queen.partitions p on p.id = s.partition_id
     where s.query_id = $1 order by p.name, s.key`,
    [queryId],
  );
  const seq = Array.from({ length: PER_PARTITION }, (_, i) => i);
  for (let p = 0; p < PARTITIONS; p++) {
    const rows = Object.fromEntries(state.filter((s) => s.partition === `p${p}`).map((s) => [s.key, s.value]));
    expect(
      [...rows.seen].sort((a: number, b: number) => a - b),
      `p${p}`,
    ).toEqual(seq);
    expect(rows.count, `p${p}`).toBe(PER_PARTITION);
  }
  const sink = await app.db.query<{ payload: any }>(
    `select m.payload from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
     where q.name = 'conc.sink'`,
  );
  expect(sink).toHaveLength(total);
  expect(new Set(sink.map((m) => `${m.payload.from}/${m.payload.seq}`)).size).toBe(total);
  // the shards' maintained figures equal what the state rows hold, after every refusal and retry
  const [kept] = await app.db.query<{ keys: number; bytes: number }>(
    'select sum(state_keys)::int as keys, sum(state_bytes)::int as bytes from queen_streams.shards where query_id = $1',
    [queryId],
  );
  const [counted] = await app.db.query<{ keys: number; bytes: number }>(
    'select count(*)::int as keys, sum(octet_length(key) + octet_length(value::text))::int as bytes from queen_streams.state where query_id = $1',
    [queryId],
  );
  expect(kept).toEqual(counted);
  expect(kept.keys).toBe(PARTITIONS * 2);
  console.log('streams concurrency outcomes', outcomes);
});
