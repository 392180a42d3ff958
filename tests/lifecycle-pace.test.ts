// Issue 30, item 3: a lifecycle job that keeps pace. One run removes everything that is due of
// what outlives messages (remembered transaction ids, the deliveries history, audit rows, dead
// letters), batch after batch, not 10,000 of each: under default options a broker taking 11,000
// messages a second makes 11,000 remembered ids due a second. What is not due yet stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { pushMany } from './support/broker';

const DUE = 25_000; // two and a half of the old per-run cap
const NOT_DUE = 7;

describe('a lifecycle run that keeps pace', () => {
  let app: TestApp;
  // the app's own job would run at its own moments; here the test runs it
  beforeAll(async () => {
    app = await startApp({ RETENTION_INTERVAL_MS: '3600000' });
  });
  afterAll(() => app.stop());

  const count = async (sql: string) => (await app.db.query<{ n: number }>(sql))[0].n;

  it(`removes all of ${DUE.toLocaleString('en')} due rows of each kind in one run, and nothing that is not due`, async () => {
    await pushMany(app.api, 'pace.dead', 'p', 1, 'd');
    const [{ id: partition }] = await app.db.query<{ id: string }>(
      `select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'pace.dead'`,
    );
    // due, and not due yet, of each kind
    await app.db.query(
      `insert into queen.removed_transactions (transaction_id, partition_id, message_id, forget_at)
       select 'tx-' || i, $1, gen_random_uuid(), case when i <= $2::int then now() - interval '1 minute' else now() + interval '1 hour' end
       from generate_series(1, $2::int + $3::int) i`,
      [partition, DUE, NOT_DUE],
    );
    await app.db.query(
      `insert into queen.deliveries (partition_id, consumer_group, lease_id, from_offset, to_offset, holder, claimed_at, ended_at, ended)
       select $1, 'g', gen_random_uuid(), i, i, 'h', t, t, 'acked'
       from generate_series(1, $2::int + $3::int) i,
            lateral (select case when i <= $2::int then now() - interval '25 hours' else now() - interval '1 hour' end as t) x`,
      [partition, DUE, NOT_DUE],
    );
    await app.db.query(
      `insert into queen.audit_log (at, actor, action, target_type, target, result)
       select case when i <= $1::int then now() - interval '91 days' else now() - interval '1 day' end, 'pace', 'x', 't', 't', 'ok'
       from generate_series(1, $1::int + $2::int) i`,
      [DUE, NOT_DUE],
    );
    await app.db.query(
      `insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count, failed_at)
       select $1, 'g', i, 'boom', 1, case when i <= $2::int then now() - interval '31 days' else now() - interval '1 day' end
       from generate_series(1, $2::int + $3::int) i`,
      [partition, DUE, NOT_DUE],
    );

    // one run, with a time budget no machine reaches (a run that stops early says `more`)
    const [{ p_summary: summary }] = await app.db.query<{ p_summary: any }>(
      'call queen.run_lifecycle(200, 90, 30, $1, 1000, null, 24, 3600)',
      ['test'],
    );
    expect(summary).toMatchObject({
      transactionIdsForgotten: DUE,
      deliveriesForgotten: DUE,
      auditRows: DUE,
      deadLetters: DUE,
      more: false,
    });
    expect(await count(`select count(*)::int as n from queen.removed_transactions`)).toBe(NOT_DUE);
    expect(await count(`select count(*)::int as n from queen.deliveries where holder = 'h'`)).toBe(NOT_DUE);
    expect(await count(`select count(*)::int as n from queen.audit_log where actor = 'pace'`)).toBe(NOT_DUE);
    expect(await count(`select count(*)::int as n from queen.dead_letters`)).toBe(NOT_DUE);
    // what the job wrote for the operators: the same summary
    const [state] = await app.db.query<{ value: any }>(`select value from queen.system_state where key = 'lifecycle'`);
    expect(state.value).toMatchObject({ transactionIdsForgotten: DUE, deliveriesForgotten: DUE, more: false });
  });

  it('a run whose time is spent says more is due, and the next one goes on from there', async () => {
    const [{ id: partition }] = await app.db.query<{ id: string }>(
      `select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'pace.dead'`,
    );
    await app.db.query(
      `insert into queen.removed_transactions (transaction_id, partition_id, message_id, forget_at)
       select 'again-' || i, $1, gen_random_uuid(), now() - interval '1 minute' from generate_series(1, $2) i`,
      [partition, DUE],
    );
    // no time at all: each kind gets its one batch, and the run says so
    const [{ p_summary: first }] = await app.db.query<{ p_summary: any }>(
      'call queen.run_lifecycle(200, 90, 30, $1, 1000, null, 24, 0)',
      ['test'],
    );
    expect(first).toMatchObject({ transactionIdsForgotten: 10_000, more: true });
    const [{ p_summary: second }] = await app.db.query<{ p_summary: any }>(
      'call queen.run_lifecycle(200, 90, 30, $1, 1000, null, 24, 3600)',
      ['test'],
    );
    expect(second).toMatchObject({ transactionIdsForgotten: DUE - 10_000, more: false });
  });

  it('a call of the earlier five arguments still runs (an instance of the previous release)', async () => {
    const [{ p_summary: summary }] = await app.db.query<{ p_summary: any }>(
      'call queen.run_lifecycle(200, 90, 30, $1, 1000)',
      ['old'],
    );
    expect(summary).toMatchObject({ by: 'old', transactionIdsForgotten: 0, more: false });
  });
});
