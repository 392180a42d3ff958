// The hot paths' statements (pop, ack, push, the parked pops' claim) are prepared once per pool
// connection by executePrepared; in a transaction they run unnamed; and a statement whose result
// columns changed under it (a newer release replaced the function it calls) is prepared anew
// instead of failing every call on that connection.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from './support/db';

describe('executePrepared', () => {
  let t: TestDatabase;
  let pool: typeof import('@/db/pool');

  beforeAll(async () => {
    t = await testDatabase({ migrated: false });
    process.env.DATABASE_URL = t.url;
    process.env.DB_POOL_SIZE = '2';
    pool = await import('@/db/pool');
    await t.query('create function answer(x int) returns table (a int) language sql as $$ select x $$');
  });
  afterAll(async () => {
    await pool.pool().end();
    await t.drop();
  });

  const prepared = async () =>
    (await pool.pool().query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements'))
      .rows;

  it('prepares a statement once on the pool and runs it again by name', async () => {
    for (const x of [1, 2, 3]) {
      const { rows } = await pool.executePrepared<{ a: number }>(pool.db(), sql`select * from answer(${x}::int)`);
      expect(rows).toEqual([{ a: x }]);
    }
    const names = await prepared();
    expect(names).toHaveLength(1);
    expect(names[0].name).toMatch(/^queen_/);
    expect(names[0].statement).toContain('answer($1::int)');
  });

  it('runs unnamed in a transaction', async () => {
    const before = await prepared();
    await pool.db().transaction(async (tx) => {
      const { rows } = await pool.executePrepared<{ a: number }>(tx, sql`select * from answer(${7}::int) as other`);
      expect(rows).toEqual([{ a: 7 }]);
    });
    expect(await prepared()).toEqual(before);
  });

  it('reads values as the unnamed path does: a timestamp stays the text PostgreSQL wrote', async () => {
    const query = () => sql`select '2026-12-06 01:02:03.456789+00'::timestamptz as at, 9007199254740993::bigint as n`;
    const named = await pool.executePrepared<{ at: unknown; n: unknown }>(pool.db(), query());
    const unnamed = await pool.db().transaction((tx) => pool.executePrepared<{ at: unknown; n: unknown }>(tx, query()));
    expect(named.rows).toEqual(unnamed.rows);
    expect(named.rows).toEqual([{ at: '2026-12-06 01:02:03.456789+00', n: '9007199254740993' }]);
  });

  it('prepares anew when the function it calls changed its result columns', async () => {
    // prepared on both connections: the pool drops the one that fails, and the retry gets the other
    const both = [1, 2].map((x) => pool.executePrepared(pool.db(), sql`select * from answer(${x}::int)`));
    expect((await Promise.all(both)).map((r) => r.rows)).toEqual([[{ a: 1 }], [{ a: 2 }]]);
    expect(pool.pool().totalCount).toBe(2);
    await t.query('drop function answer(int)');
    await t.query(`create function answer(x int) returns table (a int, b text) language sql as $$ select x, 'new' $$`);
    const { rows } = await pool.executePrepared<{ a: number; b: string }>(
      pool.db(),
      sql`select * from answer(${4}::int)`,
    );
    expect(rows).toEqual([{ a: 4, b: 'new' }]);
    const again = await pool.executePrepared<{ a: number; b: string }>(pool.db(), sql`select * from answer(${5}::int)`);
    expect(again.rows).toEqual([{ a: 5, b: 'new' }]);
  });
});
