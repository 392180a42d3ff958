import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest, notFound } from './errors';
import { isoTimestamp, name, parseWith, pathName, queryInteger } from './validate';

const MAX_PREVIEW_ROWS = 1000;

export const seekPreviewQuery = z.object({
  toEnd: z.literal('true', 'must be true (or give timestamp instead)').optional(),
  timestamp: isoTimestamp.optional(),
  partition: name.optional(),
  limit: queryInteger(1, MAX_PREVIEW_ROWS).optional(),
});

type PreviewRow = {
  partitions: number;
  moved: number;
  skipped: number;
  replayed: number;
  leasesEnded: number;
  changed: number;
  rows:
    | {
        partition: string;
        partitionId: string;
        committed: number;
        target: number;
        skipped: number;
        replayed: number;
        endsLease: boolean;
      }[]
    | null;
};

/**
 * What a seek of the group on the queue (or one partition of it) would do, moving nothing: the
 * messages it skips and replays, per partition and in total, and the live leases it ends. One
 * aggregate query over the queue's partitions; the per-partition list holds the first `limit`
 * partitions (by name) whose cursor moves.
 */
export async function previewSeek(group: string, queue: string, search: URLSearchParams) {
  pathName(group, 'group');
  pathName(queue, 'queue');
  const q = parseWith(seekPreviewQuery, Object.fromEntries(search), 'query');
  if (Boolean(q.toEnd) === Boolean(q.timestamp)) throw badRequest('query: give exactly one of toEnd=true or timestamp');
  const at = q.timestamp ? new Date(q.timestamp).toISOString() : null;
  const limit = q.limit ?? 100;
  const { rows } = await db().execute<PreviewRow>(sql`
    with t as (select * from queen.seek_preview(${group}, ${queue}, ${q.partition ?? null}, ${Boolean(q.toEnd)}, ${at}::timestamptz))
    select count(*)::int as partitions,
           count(*) filter (where t.committed <> t.target)::int as moved,
           coalesce(sum(t.skipped), 0)::float8 as skipped, coalesce(sum(t.replayed), 0)::float8 as replayed,
           count(*) filter (where t.ends_lease)::int as "leasesEnded",
           count(*) filter (where t.skipped + t.replayed > 0 or t.ends_lease)::int as changed,
           (select json_agg(json_build_object('partition', m.partition, 'partitionId', m.partition_id, 'committed', m.committed,
                                              'target', m.target, 'skipped', m.skipped, 'replayed', m.replayed, 'endsLease', m.ends_lease)
                            order by m.partition)
            from (select * from t where t.skipped + t.replayed > 0 or t.ends_lease order by t.partition limit ${limit}) m) as rows
    from t`);
  const r = rows[0];
  if (r.partitions === 0) {
    throw notFound(
      q.partition
        ? `partition ${JSON.stringify(q.partition)} of queue ${JSON.stringify(queue)} not found`
        : `queue ${JSON.stringify(queue)} not found`,
    );
  }
  return {
    consumerGroup: group,
    queueName: queue,
    partitionName: q.partition ?? null,
    target: q.toEnd ? { toEnd: true } : { timestamp: at },
    partitions: r.partitions,
    partitionsMoved: r.moved,
    skipped: r.skipped,
    replayed: r.replayed,
    leasesEnded: r.leasesEnded,
    changes: r.rows ?? [],
    changesTruncated: r.changed > (r.rows?.length ?? 0),
  };
}
