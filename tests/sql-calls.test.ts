// What a hot request costs the database in round trips, counted by PostgreSQL itself: the
// transactions committed on the test's database while the real server answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { pushMany } from './support/broker';

const N = 50;
/** The server's own background work (instance heartbeat, samplers) during the calls, at most. */
const BACKGROUND = 45;

describe('SQL calls per request', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ PUSH_CALLS_IN_FLIGHT: '1' });
  });
  afterAll(() => app?.stop());

  async function transactions(): Promise<number> {
    // the statistics are a snapshot per transaction; a fresh one each time
    await app.db.query('select pg_stat_clear_snapshot()');
    const [row] = await app.db.query<{ n: string }>(
      'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
    );
    return Number(row.n);
  }

  /** Transactions of the server while `calls` runs (a backend reports its counts when idle for 10 s: waited out). */
  async function transactionsDuring(calls: () => Promise<void>): Promise<number> {
    const settle = () => new Promise((r) => setTimeout(r, 11_500));
    await settle();
    const before = await transactions();
    await calls();
    await settle();
    const ours = 1; // the first read of transactions() itself
    return (await transactions()) - before - ours;
  }

  it('an empty pop is one SQL call, its reason (idle or paused) from the same call', async () => {
    await pushMany(app.api, 'calls.q', 'p', 1);
    expect((await app.api.get('/api/v1/pop/queue/calls.q?batch=1&autoAck=true')).status).toBe(200);
    await pushMany(app.api, 'calls.q', 'p', 1, 'more');
    const [{ id }] = await app.db.query<{ id: string }>(
      `select c.partition_id as id from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = 'calls.q' and c.consumer_group = '__QUEUE_MODE__'`,
    );
    const emptyPops = async (reason: string) => {
      for (let i = 0; i < N; i++) {
        const r = await app.api.get('/api/v1/pop/queue/calls.q?batch=1');
        expect([r.status, r.headers.get('x-queen-empty')]).toEqual([204, reason]);
      }
    };
    const pause = async (paused: boolean) =>
      expect(
        (await app.api.post(`/api/v1/cursors/${id}/__QUEUE_MODE__/pause`, { paused, reason: 'calls' })).status,
      ).toBe(200);
    await pause(true);
    await emptyPops('paused'); // the route's first calls may prepare what later ones reuse
    await pause(false);
    const during = await transactionsDuring(async () => {
      await pause(true);
      await emptyPops('paused');
      await pause(false);
      await app.api.get('/api/v1/pop/queue/calls.q?batch=1&autoAck=true');
      await emptyPops('idle');
    });
    // 2N empty pops and four other calls: two SQL calls per empty pop would be 4N
    console.log(`[sql-calls] ${during} transactions for 2 × ${N} empty pops and 4 other calls`);
    expect(during).toBeGreaterThanOrEqual(2 * N);
    expect(during).toBeLessThanOrEqual(2 * N + BACKGROUND);
  }, 90_000);

  it('batch-1 pushes from many connections to different partitions go to the database together', async () => {
    const workers = 8;
    const each = 25;
    for (let i = 0; i < each; i++) {
      // eight producers pushing at the same moment, one message each
      const answers = await Promise.all(
        Array.from({ length: workers }, (_, w) =>
          app.api.post('/api/v1/push', {
            items: [{ queue: 'calls.pushes', partition: `w${w}-${i}`, payload: { w, i } }],
          }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(workers).fill(201));
    }
    // the segments one call writes share its clock_timestamp(): one per call
    const [{ calls, messages }] = await app.db.query<{ calls: string; messages: string }>(
      `select count(distinct s.created_at) as calls, sum(s.last_offset - s.first_offset + 1) as messages
       from queen.segments s join queen.partitions p on p.id = s.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = 'calls.pushes'`,
    );
    console.log(`[sql-calls] ${calls} push calls for ${workers} × ${each} batch-1 pushes`);
    expect(Number(messages)).toBe(workers * each);
    // one call per push would be 200; with one call in flight, the pushes waiting meanwhile merge
    expect(Number(calls)).toBeLessThanOrEqual((workers * each) / 2);
  });
});
