// queen.pop is called by name, and every argument but the lease id has a default (issue 31): a new
// parameter is one more `p_x ... default` and no caller changes. Checks that every call of the
// functions the pop path runs names its arguments, that pop_or_why takes exactly pop's arguments,
// and that pop takes exactly the parameters lib/broker/pop-params.ts describes, with their defaults.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POP_SQL_ARGUMENTS, parsePopQuery } from '@/lib/broker/pop-params';
import { testDatabase, type TestDatabase } from './support/db';

const root = path.join(__dirname, '..');
const CALLED_BY_NAME = ['pop', 'pop_or_why', 'claim_for_waiters', 'push'];

function filesUnder(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p, ext);
    return ext.test(e.name) ? [p] : [];
  });
}

/** Every call `queen.<fn>(` in lib/ and sql/functions/ whose first argument is not `p_name =>`. */
function positionalCalls(): string[] {
  const out: string[] = [];
  for (const file of [...filesUnder('lib', /\.(ts|tsx|mjs)$/), ...filesUnder('sql/functions', /\.sql$/)]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/(create\s+or\s+replace\s+function\s+)?queen\.(\w+)\(([^)]*)/gi)) {
      if (m[1] || !CALLED_BY_NAME.includes(m[2])) continue;
      const line = text.slice(0, m.index).split('\n').length;
      const lineText = text.split('\n')[line - 1];
      if (/^\s*(--|\/\/|\*|\/\*\*)/.test(lineText)) continue; // prose
      if (m[3].trim() === '' && /queen\.\w+\(\)/.test(m[0] + ')')) continue; // `queen.push()` in prose
      if (!/^\s*p_\w+\s*=>/.test(m[3])) out.push(`${file}:${line}: queen.${m[2]}(${m[3].slice(0, 40)}`);
    }
  }
  return out;
}

describe('queen.pop by name', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db?.drop());

  async function signatures(name: string): Promise<string[]> {
    const rows = await db.query<{ args: string }>(
      `select pg_get_function_arguments(p.oid) as args from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'queen' and p.proname = $1 order by p.pronargs desc`,
      [name],
    );
    return rows.map((r) => r.args);
  }

  it('every call of the pop path and of queen.push in lib/ and sql/functions/ names its arguments', () => {
    expect(positionalCalls()).toEqual([]);
  });

  it("a parked pop's claim reads every parameter its entry of p_waiters carries (sql/functions/claim.sql)", () => {
    const claim = fs.readFileSync(path.join(root, 'sql/functions/claim.sql'), 'utf8').replace(/--.*$/gm, ''); // the code, not its prose
    const carried = POP_SQL_ARGUMENTS.filter((a) => !a.scope).map((a) => a.name);
    expect(carried).toContain('batch');
    expect(carried.filter((name) => !new RegExp(`\\b${name}\\b`).test(claim))).toEqual([]);
  });

  it('has one current signature: the lease id, then arguments that all have defaults (and 0.1.0 positional one)', async () => {
    const [current, older, ...more] = await signatures('pop');
    expect(more).toEqual([]);
    expect(older).not.toMatch(/DEFAULT/); // 0.1.0's, kept for its instances
    const args = current.split(/,\s*(?=p_)/);
    expect(args[0]).toBe('p_lease_id uuid');
    expect(args.slice(1).filter((a) => !/ DEFAULT /.test(a))).toEqual([]);
    expect(await signatures('pop_or_why')).toEqual([current]);
  });

  it('takes every parameter lib/broker/pop-params.ts describes, with the default the routes fill in', async () => {
    const [current] = await signatures('pop');
    const defaults = Object.fromEntries(
      current
        .split(/,\s*(?=p_)/)
        .slice(1)
        .map((a) => {
          const m = /^(p_\w+) [\w ]+? DEFAULT (.*)$/.exec(a);
          return [m?.[1], m?.[2].replace(/::[\w ]+$/, '').replace(/^'(.*)'$/, '$1')];
        }),
    );
    // the arguments no query parameter gives: what the route names, and who pops
    const { p_queue, p_partition, p_holder, p_hold_under_full, p_subject, ...described } = defaults;
    const spec: Record<string, unknown> = parsePopQuery(new URLSearchParams());
    expect(described).toEqual(
      Object.fromEntries(
        POP_SQL_ARGUMENTS.map(({ name, arg }) => [arg, spec[name] === undefined ? 'NULL' : String(spec[name])]),
      ),
    );
    expect([p_queue, p_partition, p_holder, p_hold_under_full, p_subject]).toEqual([
      'NULL',
      'NULL',
      'NULL',
      'false',
      'NULL',
    ]);
  });

  it('pops with only the lease id and a queue given, and by 0.1.0 positional call', async () => {
    await db.query(`select * from queen.push(p_items => $1::jsonb)`, [
      JSON.stringify(
        [1, 2].map((n) => ({ queue: 'byname.q', partition: 'p', payload: { n }, transactionId: `t${n}` })),
      ),
    ]);
    const named = await db.query(
      `select * from queen.pop(p_lease_id => queen.uuidv7(), p_queue => 'byname.q', p_batch => 1)`,
    );
    expect(named.map((r) => r.transaction_id)).toEqual(['t1']);
    const [lease] = await db.query<{ lease_seconds: number }>(
      `select lease_seconds from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = 'byname.q'`,
    );
    expect(lease.lease_seconds).toBe(60); // the implicit queue's leaseTime: p_lease_seconds defaults to 0
    const positional = await db.query(
      `select * from queen.pop($1::text, $2::text, $3, $4, $5, $6::integer, $7::integer, $8::boolean, $9::integer,
                              $10::uuid, $11, $12::timestamptz, $13, $14::boolean)`,
      [
        'byname.q',
        null,
        null,
        null,
        'other',
        10,
        1,
        false,
        0,
        '0198f2c1-9a7b-7d20-8e31-4c5d6e7f8a90',
        'all',
        null,
        'old',
        false,
      ],
    );
    expect(positional.map((r) => r.transaction_id)).toEqual(['t1', 't2']);
  });
});
