import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'drizzle-orm';
import { db, pool } from '@/db/pool';
import { log } from '@/lib/log.mjs';
import { holderClients } from './holder-clients';
import { sampleStats } from './stats-sampler';
import { waiters } from './waiters';

const HEARTBEAT_MS = 5000;

/**
 * This instance's row in queen.instances, refreshed every few seconds. The SQL functions read that
 * table to decide whether to NOTIFY at all (a notifying commit holds a database-wide lock): wake-ups
 * only while another instance is alive, live-view events only while some instance has a viewer.
 */
class Instance {
  readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private timer?: NodeJS.Timeout;
  private liveViewers: () => boolean = () => false;

  async start(liveViewers: () => boolean): Promise<void> {
    this.liveViewers = liveViewers;
    await this.beat();
    this.timer ??= setInterval(() => void this.beat().catch(() => {}), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Shutting down: no heartbeat, and no row, so other instances stop notifying for this one. */
  async leave(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await db().execute(sql`delete from queen.instances where id = ${this.id}`);
  }

  /**
   * Also called at once when the first live viewer arrives or the last one leaves. Folds the
   * delivery counters of ended backends on the way (015), so their rows stay few, and samples the
   * counters for the rate charts when it is time (019): a failed sample must not stop the heartbeat.
   */
  async beat(): Promise<void> {
    await db().execute(sql`select queen.heartbeat(${this.id}, ${this.liveViewers()}), queen.fold_delivery_stats()`);
    // the System page's figures of this instance, and the holders' pop requests it counted (sql/032)
    await db().execute(
      sql`update queen.instances set facts = ${JSON.stringify(processFigures())}::jsonb where id = ${this.id}`,
    );
    await holderClients
      .flush(this.id)
      .catch((err: Error) => log('stats').warn({ err: err.message }, 'writing the holders’ pop requests failed'));
    await sampleStats().catch((err: Error) =>
      log('stats').warn({ err: err.message }, 'sampling the rate counters failed'),
    );
  }
}

/** This process's figures as the System page shows them for every instance. */
export function processFigures() {
  const m = process.memoryUsage();
  const p = pool();
  return {
    pid: process.pid,
    uptimeSeconds: Math.round(process.uptime()),
    rssBytes: m.rss,
    heapUsedBytes: m.heapUsed,
    parkedPolls: waiters.size,
    parkedScopes: waiters.scopeCount,
    poolTotal: p.totalCount,
    poolIdle: p.idleCount,
    poolWaiting: p.waitingCount,
  };
}

const slot = globalThis as unknown as { __queenInstance?: Instance };
export const instance = (slot.__queenInstance ??= new Instance());
