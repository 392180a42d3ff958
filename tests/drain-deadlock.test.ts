// Regression for the deadlock the 30-minute soak found (sql/016_drain_lock.sql): pushes to one
// partition against transactions that do what the end of queen.ack() and queen.pop() do (update
// their backlog row, then drop_drained). Before 016, PostgreSQL's SKIP LOCKED followed the partition
// row's update chain and waited on the next push, which waited on the backlog row. The race window
// is microseconds: without 016 this test failed in about 1 run of 4 (20-30 s runs on 2 cores); the
// focused script it comes from deadlocked 4 runs of 5 in 60 s. The SQL functions are called
// directly, so no retry hides a deadlock.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';

const SECONDS = Number(process.env.DRAIN_DEADLOCK_SECONDS ?? 20);
const PUSHERS = 3;
const DRAINERS = 6;
const QUEUE = 'drain.q';

describe('drop_drained against pushes', () => {
  let t: TestDatabase;
  let partition: string;
  beforeAll(async () => {
    t = await testDatabase();
    await t.query(`alter database ${t.name} set deadlock_timeout = '200ms'`);
    await t.query('select * from queen.push($1::jsonb)', [JSON.stringify([item()])]);
    for (let g = 0; g < DRAINERS; g++) {
      await t.query(
        `select * from queen.pop($1, null, '', '', $2, 1, 1, false, 0, $3::uuid, 'all', null, 'test', false)`,
        [QUEUE, `g${g}`, randomUUID()],
      );
    }
    // every group joined, nothing leased, everything pending: each group has its backlog row
    await t.query(
      `update queen.cursors set lease_id = null, lease_expires_at = null, lease_end_offset = null, committed_offset = 0`,
    );
    [{ id: partition }] = await t.query<{ id: string }>('select id from queen.partitions');
  });
  afterAll(() => t.drop());

  const item = () => ({
    queue: QUEUE,
    partition: 'p',
    payload: {},
    transactionId: randomUUID(),
    messageId: randomUUID(),
    producerSub: null,
    traceId: null,
  });

  it(`no deadlock in ${SECONDS} s`, { timeout: (SECONDS + 30) * 1000 }, async () => {
    const deadline = Date.now() + SECONDS * 1000;
    const counts = { pushes: 0, drains: 0 };
    const errors: string[] = [];
    const session = async (work: (c: pg.Client) => Promise<void>) => {
      const c = new pg.Client({ connectionString: t.url });
      await c.connect();
      try {
        while (Date.now() < deadline) await work(c);
      } finally {
        await c.end();
      }
    };
    const push = (c: pg.Client) =>
      c.query('select * from queen.push($1::jsonb)', [JSON.stringify([item()])]).then(
        () => void counts.pushes++,
        (e) => void errors.push(`push: ${e.code} ${e.message}`),
      );
    const drain = (group: string) => async (c: pg.Client) => {
      try {
        await c.query('begin');
        await c.query(
          'update queen.backlog set pending_since = pending_since where partition_id = $1 and consumer_group = $2',
          [partition, group],
        );
        await c.query('select queen.drop_drained($1, $2, 0)', [partition, group]); // committed 0: takes the lock, deletes nothing
        counts.drains++;
      } catch (e) {
        errors.push(`drain: ${(e as pg.DatabaseError).code} ${(e as Error).message}`);
      }
      await c.query('rollback');
    };
    await Promise.all([
      ...Array.from({ length: PUSHERS }, () => session(push)),
      ...Array.from({ length: DRAINERS }, (_, g) => session(drain(`g${g}`))),
    ]);
    expect(errors).toEqual([]);
    expect(counts.pushes).toBeGreaterThan(100);
    expect(counts.drains).toBeGreaterThan(100);
  });
});
