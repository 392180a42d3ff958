import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { pool, pooled } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { log } from '@/lib/log.mjs';
import { MAINTENANCE } from './pop';

const HOLDER = 'queen-warm-up';

/**
 * Opens the pool's first connections (DB_POOL_WARM) before the instance says it is ready, and on
 * each runs a push, a pop, a parked pop's claim and an ack once, in a transaction it rolls back.
 * A new PostgreSQL backend parses the broker's PL/pgSQL functions, plans their statements and
 * loads the catalog entries of every table and index they touch on its first call of each: ~20–35
 * ms per function on an idle machine, paid otherwise by the first requests after a (re)start,
 * behind the balancer that just put the instance back (docs/performance.md, "Warm connections and a
 * boot that yields").
 * The pool keeps these connections however idle (db/pool.ts). Nothing of it is left: the queue it
 * pushes to has a name of its own and is never committed. Through a transaction-mode pooler the
 * server connections are the pooler's, so nothing is warmed, nor on a database with no queue yet;
 * a failure is logged, never fatal.
 */
export async function warmConnections(): Promise<number> {
  const count = config().db.warmConnections;
  if (count === 0 || pooled()) return 0;
  try {
    // On a database with no queue yet, the broker's tables would hold only the warm-up's dead rows,
    // and an ANALYZE then would record them as pages of no live row: the planner would take those
    // tables for empty however they grew until the next one. Nothing there is worth warming for.
    const { rows } = await pool().query<{ any: boolean }>('select exists (select 1 from queen.queues) as any');
    if (!rows[0].any) return 0;
  } catch (err) {
    fail(err);
    return 0;
  }
  // all checked out at once: `count` distinct connections; those a full server still gave are warmed
  const clients: pg.PoolClient[] = [];
  for (let i = 0; i < count; i++) {
    try {
      clients.push(await pool().connect());
    } catch (err) {
      fail(err);
      break;
    }
  }
  const warmed = await Promise.all(
    clients.map((c) =>
      warm(c).then(
        () => {
          c.release();
          return true;
        },
        (err) => {
          c.release(err); // its state is unknown: the pool drops it
          return fail(err);
        },
      ),
    ),
  );
  return warmed.filter(Boolean).length;
}

function fail(err: unknown): false {
  log('boot').warn(
    { err: (err as Error).message },
    'warming a database connection failed; its first calls plan instead',
  );
  return false;
}

async function warm(client: pg.PoolClient): Promise<void> {
  const queue = `queen.warm-up.${randomUUID()}`;
  const lease = randomUUID();
  // a lock held elsewhere (another release's migration) must not hold the boot up for long
  await client.query(`begin; set local lock_timeout = '1s'; set local statement_timeout = '10s'`);
  try {
    const pushed = await client.query<{ partition_id: string }>(
      'select partition_id from queen.push(p_items => $1::jsonb)',
      [JSON.stringify(['a', 'b'].map((transactionId) => ({ queue, partition: 'p', payload: {}, transactionId })))],
    );
    // pop maintenance refuses the pops and the claims: the push and the ack are warmed all the same
    const orMaintenance = async (text: string, values: unknown[]) => {
      await client.query('savepoint pop');
      await client.query(text, values).catch(async (err: { code?: string }) => {
        if (err.code !== MAINTENANCE) throw err;
        await client.query('rollback to savepoint pop');
      });
    };
    const pop = (leaseId: string) =>
      orMaintenance(
        `select count(*) from queen.pop_or_why(p_lease_id => $1::uuid, p_queue => $2::text, p_partition => 'p',
           p_batch => 10, p_lease_seconds => 60, p_holder => $3::text)`,
        [leaseId, queue, HOLDER],
      );
    const waiter = { holder: HOLDER, batch: 10, partitions: 1, autoAck: false, leaseSeconds: 60, hold: false };
    const claim = () =>
      orMaintenance(
        `select count(*) from queen.claim_for_waiters(p_queue => $1::text, p_partition => 'p', p_namespace => '',
           p_task => '', p_group => 'warm-up', p_subscription_mode => 'all', p_subscription_from => null,
           p_waiters => $2::jsonb)`,
        [queue, JSON.stringify([{ ...waiter, leaseId: randomUUID() }])],
      );
    // each twice: a claim, then the empty pop that asks why and the claim that finds its scope dry
    await pop(lease);
    await pop(randomUUID());
    await claim();
    await claim();
    await client.query('select count(*) from queen.ack($1::jsonb, null)', [
      JSON.stringify([{ transactionId: 'a', partitionId: pushed.rows[0].partition_id, leaseId: lease }]),
    ]);
  } finally {
    await client.query('rollback');
  }
}
