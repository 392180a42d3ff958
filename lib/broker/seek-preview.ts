import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest, notFound } from './errors';
import { isoTimestamp, name, parseWith, pathName, queryInteger } from './validate';

const MAX_PREVIEW_ROWS = 1000;
/** Partitions a preview of the whole queue counts at most: a page, by name, from `after`. */
export const PREVIEW_PAGE = 1000;

export const seekPreviewQuery = z.object({
  toEnd: z.literal('true', 'must be true (or give timestamp instead)').optional(),
  timestamp: isoTimestamp.optional(),
  partition: name.optional(),
  limit: queryInteger(1, MAX_PREVIEW_ROWS).optional(),
  after: name.optional(),
});

type PreviewRow = {
  counted: number;
  last: string | null;
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
 * messages it skips and replays, per partition and in total, and the live leases it ends. A page:
 * the first PREVIEW_PAGE partitions by name after `after` (the totals count them; `next` is the
 * `after` of the next page, null on the last), so its cost follows the page, not the queue. One
 * aggregate query; the per-partition list holds the page's first `limit` partitions (by name)
 * whose cursor moves.
 */
export async function previewSeek(group: string, queue: string, search: URLSearchParams) {
  pathName(group, 'group');
  pathName(queue, 'queue');
  const q = parseWith(seekPreviewQuery, Object.fromEntries(search), 'query');
  if (Boolean(q.toEnd) === Boolean(q.timestamp)) throw badRequest('query: give exactly one of toEnd=true or timestamp');
  if (q.partition !== undefined && q.after !== undefined)
    throw badRequest('after: give either partition or after (one partition is a page of its own)');
  const at = q.timestamp ? new Date(q.timestamp).toISOString() : null;
  const limit = q.limit ?? 100;
  // one row past the page says whether another page follows
  const { rows } = await db().execute<PreviewRow>(sql`
    with fetched as (
      select * from queen.seek_preview(${group}, ${queue}, ${q.partition ?? null}, ${Boolean(q.toEnd)}, ${at}::timestamptz,
                                       ${q.after ?? null}, ${PREVIEW_PAGE + 1})
    ),
    t as (select * from fetched order by partition limit ${PREVIEW_PAGE})
    select (select count(*)::int from fetched) as counted, (select max(t.partition) from t) as last,
           count(*)::int as partitions,
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
  if (r.partitions === 0 && (q.after === undefined || !(await queueExists(queue)))) {
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
    /** the `after` of the next page of partitions; null when this page reaches the queue's last */
    next: r.counted > PREVIEW_PAGE ? r.last : null,
  };
}

async function queueExists(queue: string) {
  const { rows } = await db().execute(sql`select 1 from queen.queues where name = ${queue}`);
  return rows.length > 0;
}
