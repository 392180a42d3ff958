// A deadlock victim is run again: two transactions that lock two rows in opposite orders both
// commit through retryingConflicts, where without it one of them fails with 40P01.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingConflicts } from '@/lib/broker/conflicts';
import { testDatabase, type TestDatabase } from './support/db';

describe('retryingConflicts', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await testDatabase({ migrated: false });
    await t.query(`alter database ${t.name} set deadlock_timeout = '50ms'`);
    await t.query('create table counters (id int primary key, n int not null)');
  });
  afterAll(() => t.drop());

  /** Two transactions, each holding its first row while it waits for the other's. */
  async function crossed(run: <T>(work: () => Promise<T>) => Promise<T>) {
    await t.query('delete from counters; insert into counters values (1, 0), (2, 0)');
    let attempts = 0;
    let arrive!: () => void;
    const bothHoldOne = new Promise<void>((r) => (arrive = r));
    let holding = 0;
    const transfer = (first: number, second: number) =>
      run(async () => {
        attempts++;
        const c = await t.pool.connect();
        try {
          await c.query('begin');
          await c.query('update counters set n = n + 1 where id = $1', [first]);
          if (++holding === 2) arrive();
          await bothHoldOne;
          await c.query('update counters set n = n + 1 where id = $1', [second]);
          await c.query('commit');
        } catch (err) {
          await c.query('rollback');
          throw err;
        } finally {
          c.release();
        }
      });
    const outcomes = await Promise.allSettled([transfer(1, 2), transfer(2, 1)]);
    return { outcomes, attempts, rows: await t.query('select id, n from counters order by id') };
  }

  it('without it, PostgreSQL picks a victim', async () => {
    const { outcomes } = await crossed((work) => work());
    const failed = outcomes.filter((o) => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(((failed[0] as PromiseRejectedResult).reason as { code: string }).code).toBe('40P01');
  });

  it('with it, the victim runs again and both commit once', async () => {
    const { outcomes, attempts, rows } = await crossed(retryingConflicts);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(attempts).toBe(3);
    expect(rows).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });

  it('any other error is not retried', async () => {
    let attempts = 0;
    await expect(retryingConflicts(async () => (attempts++, t.query('select 1/0')))).rejects.toMatchObject({
      code: '22012',
    });
    expect(attempts).toBe(1);
  });
});
