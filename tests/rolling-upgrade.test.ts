// A rolling upgrade from 0.1.0: a database at 0.1.0's schema, an instance of 0.1.0 (its SQL calls,
// tests/support/release-0.1.0.ts) producing and consuming, then an instance of this release booting
// against the same database (migrating it under that traffic) and serving too. Nothing pushed by
// either is lost, every message is acked once, and every call of the 0.1.0 contract still works
// after the upgrade, answering at least the columns it answered before, or refuses clearly.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate } from '@/db/migrate';
import { testDatabase, type TestDatabase } from './support/db';
import { client } from './support/http';
import { CONTRACT_0_1_0, calls, pushItem, run, runAs010, type Call } from './support/release-0.1.0';
import { startServer, type TestServer } from './support/server';

// The last migration of 0.1.0; its function bodies lived in the migrations (no sql/functions/).
const RELEASE_0_1_0_LAST = '020_browse_and_search.sql';

/** sql/ as 0.1.0 shipped it: the migrations up to its last (append-only, so byte for byte). */
function sqlOf010(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-0.1.0-'));
  for (const f of fs.readdirSync(MIGRATIONS_DIR))
    if (/^\d{3}_.*\.sql$/.test(f) && f <= RELEASE_0_1_0_LAST)
      fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(dir, f));
  return dir;
}

/** One of each 0.1.0 call on its own queue, in an order where each has something to act on. */
async function everyCall(pool: pg.Pool, queue: string): Promise<Record<string, Awaited<ReturnType<typeof run>>>> {
  const out: Record<string, Awaited<ReturnType<typeof run>>> = {};
  const call = async (label: string, c: Call) => (out[label] = await run(pool, c));
  const instanceId = randomUUID();
  await call('configure_queue', calls.configure(queue));
  await call('push', calls.push([1, 2, 3].map((n) => pushItem(queue, 'p', `${queue}-${n}`, { n }))));
  await call('set_subscription', calls.setSubscription(queue, 'g'));
  const lease = randomUUID();
  const popped = await call('pop', calls.pop({ queue, leaseId: lease, batch: 2 }));
  const rows = 'rows' in popped ? popped.rows : [];
  const partitionId = String(rows[0]?.partition_id ?? randomUUID());
  await call('extend_lease', calls.extendLease(lease, 30));
  await call(
    'ack',
    calls.ack(
      rows.map((r, i) => ({
        transactionId: String(r.transaction_id),
        partitionId: String(r.partition_id),
        leaseId: lease,
        status: i === 0 ? 'completed' : 'failed',
        error: i === 0 ? null : 'no',
      })),
    ),
  );
  const groupLease = randomUUID();
  await call('pop (a group, one partition)', calls.pop({ queue, partition: 'p', group: 'g', leaseId: groupLease }));
  await call('release_lease', calls.releaseLease(groupLease));
  await call('pop (discovery)', calls.pop({ queue: null, namespace: 'ns', group: 'other', leaseId: randomUUID() }));
  await call('pop_empty_reason', calls.popEmptyReason(queue, 'p', 'g'));
  await call('heartbeat, fold_delivery_stats', calls.heartbeat(instanceId));
  await call('sample_stats', calls.sampleStats());
  await call('run_lifecycle', calls.runLifecycle(instanceId));
  await call('pop_maintenance', calls.popMaintenance());
  await call('set_pop_maintenance', calls.setPopMaintenance(false));
  await call('set_pause (pause)', calls.setPause(partitionId, 'g', true));
  await call('set_pause (resume)', calls.setPause(partitionId, 'g', false));
  await call('move_subscriptions', calls.moveSubscriptions('g'));
  await call('seek_preview', calls.seekPreview('g', queue));
  await call('seek', calls.seek('g', queue));
  await call('seek_partition', calls.seekPartition('g', queue, 'p'));
  await call('requeue_dead_letters', calls.requeueDeadLetters([{ partitionId, consumerGroup: 'g', offset: 1 }]));
  await call('discard_dead_letters', calls.discardDeadLetters([{ partitionId, consumerGroup: 'g', offset: 1 }]));
  await call('delete_message', calls.deleteMessage(partitionId, `${queue}-3`));
  await call('group_figures, queue_figures, metric_figures, iso', calls.figures());
  await call('queue_options', calls.queueOptions(queue));
  await call('pending_since', calls.pendingSince(queue));
  await call('delete_consumer_group', calls.deleteConsumerGroup('g', queue));
  await call('delete_queue', calls.deleteQueue(queue));
  return out;
}

/** 0.1.0's timers (lib/broker/instance.ts, lifecycle.ts), and the errors they meet again at their next run. */
const BACKGROUND = ['heartbeat', 'run_lifecycle'];
const TRANSIENT = ['40P01', '40001', '55P03'];

/** SQLSTATEs that mean the old call no longer fits the schema, not a refusal of what it asked. */
const BROKEN = ['42883', '42P01', '42703', '42804', '42725', '42P13', '42601', '0A000'];

let db: TestDatabase;
let pool: pg.Pool;
let before: Awaited<ReturnType<typeof everyCall>>;
let server: TestServer | undefined;

beforeAll(async () => {
  db = await testDatabase({ migrated: false });
  const dir = sqlOf010();
  await migrate(db.url, dir);
  fs.rmSync(dir, { recursive: true });
  pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'release-0.1.0' });
  pool.on('error', () => {});
  before = await everyCall(pool, 'ru.before');
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await pool?.end();
  await db?.drop();
});

describe('the 0.1.0 contract', () => {
  it('is what 0.1.0 sends: every call works on a 0.1.0 database', () => {
    const failed = Object.entries(before).filter(([, r]) => 'error' in r);
    expect(failed).toEqual([]);
    const named = new Set(Object.keys(before).flatMap((label) => label.split(/[ ,]+/)));
    for (const fn of Object.keys(CONTRACT_0_1_0)) expect(named.has(fn), `${fn} is exercised`).toBe(true);
  });
});

describe('a rolling upgrade from 0.1.0', () => {
  it('loses nothing while a 0.1.0 instance and one of this release share the database under traffic', async () => {
    const pushed = new Set<string>();
    const acked = new Map<string, number>();
    const oldErrors: string[] = [];
    const backgroundRetried: string[] = [];
    const newErrors: string[] = [];
    const ackedOnce = (id: string) => acked.set(id, (acked.get(id) ?? 0) + 1);
    let producing = true;
    let upgraded = false;
    let phase = 'before the upgrade';
    let oldRounds = 0;
    let oldRoundsAfter = 0;
    const oldId = randomUUID();

    const oldCall = async (label: string, c: Call) => {
      const r = await runAs010(pool, label, c);
      // 0.1.0's background jobs log a lost deadlock and run again at their next interval
      if ('error' in r && BACKGROUND.includes(label) && TRANSIENT.includes(r.code))
        backgroundRetried.push(`${label} (${phase}): ${r.code}`);
      else if ('error' in r) oldErrors.push(`${label} (${phase}): ${r.code} ${r.error}`);
      return 'rows' in r ? r.rows : [];
    };
    /** One pop and ack by the 0.1.0 instance; how many it got. */
    const oldConsume = async (queue: string) => {
      const leaseId = randomUUID();
      const rows = await oldCall('pop', calls.pop({ queue, leaseId, batch: 10 }));
      if (!rows.length) return 0;
      const results = await oldCall(
        'ack',
        calls.ack(
          rows.map((r) => ({ transactionId: String(r.transaction_id), partitionId: String(r.partition_id), leaseId })),
        ),
      );
      for (const r of results) if (r.success) ackedOnce(String(r.transaction_id));
      return rows.length;
    };
    const oldInstance = (async () => {
      for (let n = 0; producing; n++) {
        const items = [0, 1, 2].map((i) => pushItem('ru.old', `p${(n + i) % 4}`, `old-${n}-${i}`, { n, i }));
        const rows = await oldCall('push', calls.push(items));
        for (const r of rows) if (r.status === 'queued') pushed.add(String(r.transaction_id));
        await oldConsume('ru.old');
        await oldConsume('ru.new');
        if (n % 5 === 0) await oldCall('heartbeat', calls.heartbeat(oldId));
        if (n % 10 === 0) await oldCall('run_lifecycle', calls.runLifecycle(oldId));
        oldRounds++;
        if (upgraded) oldRoundsAfter++;
      }
    })();

    // the new release boots under that traffic: it migrates the database the old instance is using
    while (oldRounds < 10) await new Promise((r) => setTimeout(r, 20));
    phase = 'while this release boots and migrates';
    server = await startServer(db.url, { LOG_LEVEL: 'warn' });
    upgraded = true;
    phase = 'beside this release';
    const api = client(server.url);
    const [{ count: functionsApplied }] = await db.query<{ count: number }>(
      `select count(*)::int as count from queen.migrations where version = 'functions'`,
    );
    expect(functionsApplied).toBe(1);

    const newConsume = async (queue: string) => {
      const res = await api.get(`/api/v1/pop/queue/${queue}?batch=10&wait=false`);
      if (res.status === 204) return 0;
      if (res.status !== 200) {
        newErrors.push(`pop ${queue}: ${res.status} ${res.text.slice(0, 200)}`);
        return 0;
      }
      const acks = res.body.messages.map((m: { transactionId: string; partitionId: string }) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId ?? res.body.partitionId,
        leaseId: res.body.leaseId,
        status: 'completed',
      }));
      const done = await api.post('/api/v1/ack/batch', { acknowledgments: acks });
      if (done.status !== 200) newErrors.push(`ack: ${done.status} ${done.text.slice(0, 200)}`);
      else for (const r of done.body) if (r.success) ackedOnce(r.transactionId);
      return acks.length;
    };
    for (let n = 0; n < 15 || oldRoundsAfter < 10; n++) {
      const items = [0, 1, 2].map((i) => ({
        queue: 'ru.new',
        partition: `p${(n + i) % 4}`,
        payload: { n, i },
        transactionId: `new-${n}-${i}`,
      }));
      const res = await api.push(items);
      if (res.status !== 201) newErrors.push(`push: ${res.status} ${res.text.slice(0, 200)}`);
      else for (const r of res.body) if (r.status === 'queued') pushed.add(r.transaction_id);
      await newConsume('ru.new');
      await newConsume('ru.old');
    }
    producing = false;
    await oldInstance;

    // drain what is left, both instances consuming
    for (let idle = 0, round = 0; idle < 3 && round < 500; round++) {
      const got = (
        await Promise.all([oldConsume('ru.old'), oldConsume('ru.new'), newConsume('ru.old'), newConsume('ru.new')])
      ).reduce((a, b) => a + b, 0);
      idle = got === 0 ? idle + 1 : 0;
    }

    if (backgroundRetried.length)
      console.warn(
        `0.1.0's background jobs lost a deadlock to the migration and run again later: ${backgroundRetried.join('; ')}`,
      );
    expect(oldErrors).toEqual([]);
    expect(newErrors).toEqual([]);
    expect(oldRoundsAfter).toBeGreaterThanOrEqual(10);
    expect([...pushed].some((id) => id.startsWith('old-'))).toBe(true);
    expect([...pushed].some((id) => id.startsWith('new-'))).toBe(true);
    const lost = [...pushed].filter((id) => !acked.has(id));
    expect(lost).toEqual([]);
    expect([...acked].filter(([, n]) => n > 1)).toEqual([]);
    expect(acked.size).toBe(pushed.size);
  }, 120_000);

  it('keeps every call of the 0.1.0 contract: it works and answers at least its old columns, or refuses clearly', async () => {
    expect(server, 'the upgrade above ran').toBeDefined();
    const after = await everyCall(pool, 'ru.after');
    const problems: string[] = [];
    for (const [label, old] of Object.entries(before)) {
      const now = after[label];
      if ('error' in now) {
        if (BROKEN.includes(now.code) || !now.error)
          problems.push(`${label}: no longer fits (${now.code} ${now.error})`);
        else console.warn(`0.1.0's ${label} is refused after the upgrade: ${now.code} ${now.error}`);
      } else if ('fields' in old) {
        const missing = old.fields.filter((f) => !now.fields.includes(f));
        if (missing.length) problems.push(`${label}: lost the columns ${missing.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('resolves every 0.1.0 function by its name and argument count', async () => {
    const rows = await db.query<{ name: string; args: number; defaults: number }>(`
      select p.proname as name, p.pronargs::int as args, p.pronargdefaults::int as defaults
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'queen'`);
    const missing = Object.entries(CONTRACT_0_1_0)
      .filter(([name, n]) => !rows.some((r) => r.name === name && r.args >= n && r.args - r.defaults <= n))
      .map(([name, n]) => `queen.${name} with ${n} arguments`);
    expect(missing).toEqual([]);
  });
});
