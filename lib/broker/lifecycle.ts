import pg from 'pg';
import { databaseUrl } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { log } from '@/lib/log.mjs';
import { metrics } from '@/lib/metrics/registry';
import { instance } from './instance';

// Any constant; the same for every instance of the app.
const LIFECYCLE_LOCK = 0x5155_4c46; // "QULF"
// How long one run goes on while more is due: its summary and metrics show at least this often,
// and a stop() waits for at most one batch (each commits on its own).
const RUN_SECONDS = 5;

/**
 * The storage lifecycle job (queen.run_lifecycle, sql/functions/lifecycle.sql): one instance per
 * database runs it, the one whose dedicated session holds an advisory lock; the others try to take
 * the lock at every interval, so one takes over within an interval when the holder stops or loses
 * its connection. A run visits only the partitions that are due and removes what outlives messages
 * (remembered transaction ids, the deliveries history, audit rows, dead letters) batch after
 * batch; one that stopped with something still due (its partition budget or its time spent) is
 * followed at once by another, so removal keeps up with ingest.
 */
class Lifecycle {
  private client?: pg.Client;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  start(): void {
    this.stopped = false;
    this.schedule(config().lifecycle.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const { intervalMs, batch, auditDays, deadLetterDays, deliveryHours } = config().lifecycle;
    let next = intervalMs;
    try {
      if (await this.lead()) {
        const started = process.hrtime.bigint();
        const { rows } = await this.client!.query<{
          p_summary: { more: boolean; removedByOption: Record<string, number> };
        }>('call queen.run_lifecycle($1, $2, $3, $4, $5, null, $6, $7)', [
          batch,
          auditDays,
          deadLetterDays,
          instance.id,
          intervalMs,
          deliveryHours,
          RUN_SECONDS,
        ]);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const m = metrics();
        m.lifecycleRuns.inc();
        m.lifecycleSeconds.inc(seconds);
        m.lifecycleLastRun.set(seconds);
        for (const [option, n] of Object.entries(rows[0].p_summary.removedByOption))
          m.lifecycleRemoved.inc({ option }, n);
        if (rows[0].p_summary.more) next = 0; // more is due
      }
    } catch (err) {
      // stop() ends the connection under a run in flight: not a failed run (its backend ends or finishes it)
      if (!this.stopped) log('lifecycle').error({ err: (err as Error).message }, 'lifecycle run failed');
      await this.client?.end().catch(() => {});
      this.client = undefined;
    }
    this.schedule(next);
  }

  /** Whether this instance holds the job's lock (taking it when nobody does). */
  private async lead(): Promise<boolean> {
    if (this.client) return true;
    const client = new pg.Client({ connectionString: databaseUrl(), application_name: 'queen-lifecycle' });
    client.on('error', () => {}); // a lost connection shows at the next query
    await client.connect();
    // what the broker's functions set in their definitions; a procedure that commits cannot
    await client.query('set enable_seqscan = off; set jit = off; set plan_cache_mode = force_custom_plan');
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [LIFECYCLE_LOCK]);
    if (!rows[0].ok || this.stopped) {
      // a stop() during the connect found no client to end: this one is not kept
      await client.end();
      return false;
    }
    this.client = client;
    return true;
  }
}

const slot = globalThis as unknown as { __queenLifecycle?: Lifecycle };
export const lifecycle = (slot.__queenLifecycle ??= new Lifecycle());
