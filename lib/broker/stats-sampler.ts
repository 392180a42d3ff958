import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { config } from '@/lib/config.mjs';

/**
 * Takes one sample of every queue's and group's counters (sql/019) unless another instance took
 * one less than STATS_SAMPLE_SECONDS ago, and prunes what is older than STATS_RETENTION_HOURS.
 * `at` is for tests, which drive sampling with controlled timestamps.
 */
export async function sampleStats(at?: string): Promise<boolean> {
  const { sampleSeconds, retentionHours } = config().stats;
  const { rows } = await db().execute<{ sampled: boolean }>(sql`
    select queen.sample_stats(make_interval(secs => ${sampleSeconds}), make_interval(hours => ${retentionHours}),
                              coalesce(${at ?? null}::timestamptz, now())) as sampled`);
  return rows[0].sampled;
}
