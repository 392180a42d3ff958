// A booting server runs lowered by BOOT_NICE, its threads and its session's autogroup, and serves at
// the priority it was started with (scripts/lib/boot-priority.mjs). Its boot is held at the
// migrations by the lock they take, so the test reads the priorities while it boots.
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MIGRATION_LOCK } from '@/db/migrate';
import { mayRaiseTo, readAutogroup } from '../scripts/lib/boot-priority.mjs';
import { testDatabase, type TestDatabase } from './support/db';
import { type SpawnOptions, spawnServer, waitForHealth } from './support/server';

// what the runner is started with is what a server it starts is started with
const started = { threads: os.getPriority(), group: readAutogroup() };
const asStarted = { threads: [started.threads], group: started.group };
// a server lowers itself only where it can raise itself back, as the runner then can
const canLower =
  fs.existsSync('/proc/self/autogroup') &&
  started.group !== undefined &&
  mayRaiseTo(Math.min(started.threads, started.group));
let db: TestDatabase;
beforeAll(async () => {
  db = await testDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Each thread's nice value, and its autogroup's. */
function priorities(pid: number) {
  const threads = fs
    .readdirSync(`/proc/${pid}/task`)
    .map((tid) => {
      try {
        // the fields after the command's closing parenthesis; nice is the 17th of them
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      } catch {
        return undefined; // a thread that ended meanwhile
      }
    })
    .filter((n) => n !== undefined);
  return { threads: [...new Set(threads)], group: readAutogroup(pid) };
}

/** Starts the server with the migration lock held, and waits until its boot waits for it. */
async function bootHeld(env: Record<string, string>, options: SpawnOptions = {}) {
  const lock = new pg.Client({ connectionString: db.url });
  await lock.connect();
  await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
  const server = await spawnServer(db.url, env, [], options);
  await vi.waitFor(
    async () => {
      const [waiting] = await db.query<{ n: number }>(
        `select count(*)::int as n from pg_locks l join pg_stat_activity a using (pid)
          where l.locktype = 'advisory' and not l.granted and a.application_name = 'queen-migrate'`,
      );
      expect(waiting.n).toBe(1);
    },
    { timeout: 60_000, interval: 50 },
  );
  return {
    pid: server.process.pid!,
    release: async () => {
      await lock.end();
      await waitForHealth(server.url, server.process, server.output);
    },
    stop: async () => {
      await lock.end().catch(() => {});
      await server.stop();
    },
  };
}

describe.runIf(canLower)('the boot yields the CPU', () => {
  it('runs lowered by BOOT_NICE, threads and autogroup, until it serves; then as started', async () => {
    const server = await bootHeld({ BOOT_NICE: '19' });
    try {
      expect(priorities(server.pid)).toEqual({
        threads: [Math.min(19, started.threads + 19)],
        group: Math.min(19, (started.group as number) + 19),
      });
      await server.release();
      expect(priorities(server.pid)).toEqual(asStarted);
    } finally {
      await server.stop();
    }
  });

  it('is not lowered with BOOT_NICE=0', async () => {
    const server = await bootHeld({ BOOT_NICE: '0' });
    try {
      expect(priorities(server.pid)).toEqual(asStarted);
    } finally {
      await server.stop();
    }
  });

  it('lowers only its threads in a session it does not lead (a shell, a process manager)', async () => {
    const server = await bootHeld({ BOOT_NICE: '19' }, { ownSession: false });
    try {
      expect(priorities(server.pid)).toEqual({ threads: [Math.min(19, started.threads + 19)], group: started.group });
      await server.release();
      expect(priorities(server.pid)).toEqual(asStarted);
    } finally {
      await server.stop();
    }
  });

  // setpriv drops a capability from the bounding set only as root (CAP_SETPCAP)
  it.runIf(process.getuid?.() === 0)(
    'is not lowered where it could not raise its priority back (no CAP_SYS_NICE, RLIMIT_NICE 0)',
    async () => {
      const server = await bootHeld(
        { BOOT_NICE: '19' },
        { wrapper: ['setpriv', '--bounding-set=-sys_nice', '--inh-caps=-sys_nice'] },
      );
      try {
        expect(priorities(server.pid)).toEqual(asStarted);
        await server.release();
      } finally {
        await server.stop();
      }
    },
  );
});
