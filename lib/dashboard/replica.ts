import { sql } from 'drizzle-orm';
import { db, readDb, readsFromReplica } from '@/db/pool';
import { driverError } from '@/lib/broker/errors';

export type ReadSource =
  | { reads: 'primary' }
  | {
      reads: 'replica';
      /** false: DATABASE_READ_URL answers but is not in recovery (a primary, or a promoted standby) */
      standby: boolean;
      /** WAL the primary has written that the replica has not replayed yet (0 when caught up) */
      lagBytes: number;
      /** 0 when caught up; else the age of the last transaction the replica replayed (null: none yet) */
      lagSeconds: number | null;
      /** replay stopped by pg_wal_replay_pause(): the lag grows until it is resumed */
      replayPaused: boolean;
      primaryLsn: string;
      replayLsn: string | null;
      lastReplayedAt: string | null;
    }
  | { reads: 'replica'; error: string };

/**
 * Where the dashboard's reads come from and how far behind that is. The primary's WAL position is
 * read first, so a replica that has replayed up to it holds every commit made before this call:
 * lag 0, even when the primary is idle (pg_last_xact_replay_timestamp() alone would then age for
 * ever). Behind it, the seconds are the age of the last commit replayed: the reads miss at most
 * what was committed since (docs/decisions.md, "How stale the replica is").
 */
export async function readSource(): Promise<ReadSource> {
  if (!readsFromReplica()) return { reads: 'primary' };
  try {
    const primary = await db().execute<{ lsn: string }>(sql`select pg_current_wal_lsn()::text as lsn`);
    const primaryLsn = primary.rows[0].lsn;
    const { rows } = await readDb().execute<{
      standby: boolean;
      replay_lsn: string | null;
      bytes: number | null;
      seconds: number | null;
      paused: boolean;
      replayed_at: string | null;
    }>(sql`
      select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay_lsn,
             greatest(pg_wal_lsn_diff(${primaryLsn}::pg_lsn, pg_last_wal_replay_lsn()), 0)::float8 as bytes,
             extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as seconds,
             case when pg_is_in_recovery() then pg_is_wal_replay_paused() else false end as paused,
             queen.iso(pg_last_xact_replay_timestamp()) as replayed_at`);
    const r = rows[0];
    const lagBytes = r.standby ? (r.bytes ?? 0) : 0;
    return {
      reads: 'replica',
      standby: r.standby,
      lagBytes,
      lagSeconds: lagBytes === 0 ? 0 : r.seconds === null ? null : Math.max(0, r.seconds),
      replayPaused: r.paused,
      primaryLsn,
      replayLsn: r.replay_lsn,
      lastReplayedAt: r.replayed_at,
    };
  } catch (err) {
    return { reads: 'replica', error: driverError(err)?.message ?? String(err) };
  }
}
