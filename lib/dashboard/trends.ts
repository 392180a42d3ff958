import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { badRequest, notFound } from '@/lib/broker/errors';
import { name, parseWith, queryInteger } from '@/lib/broker/validate';

/** The columns a chart plots, in uPlot's shape: one array per measure, `at` in epoch seconds. */
export interface TrendSeries {
  queue: string;
  /** null: the queue as a whole (its groups summed; lag the largest of any group) */
  group: string | null;
  at: number[];
  /** per second, over the interval ending at the same index of `at` */
  pushed: number[];
  delivered: number[];
  acked: number[];
  failed: number[];
  /** messages, at that instant */
  lag: number[];
}

export interface Trends {
  now: string;
  minutes: number;
  sampleSeconds: number;
  series: TrendSeries[];
}

export const trendsQuery = z.object({
  queue: name.optional(),
  group: name.optional(),
  minutes: queryInteger(1, 31 * 24 * 60).optional(),
  points: queryInteger(1, 1000).optional(),
});

/**
 * Rates over the last `minutes` from the samples of sql/019: each point is the difference between
 * two consecutive samples over the seconds between them (a counter that went down, as when a group
 * is re-created, counts 0). Without `queue`: every queue as a whole; with `queue`: that queue as a
 * whole; with `group` too: that group alone. With `points`, the window is cut into that many equal
 * buckets and each point is its bucket's rate (its differences summed over its seconds; lag: the
 * bucket's last), so a page of many sparklines stays small.
 */
export async function trends(search: URLSearchParams): Promise<Trends> {
  const f = parseWith(trendsQuery, Object.fromEntries(search), 'query');
  const { sampleSeconds, retentionHours } = config().stats;
  if (f.group !== undefined && f.queue === undefined) throw badRequest('group: needs queue');
  const minutes = f.minutes ?? 60;
  if (minutes > retentionHours * 60)
    throw badRequest(
      `minutes: must be at most ${retentionHours * 60} (STATS_RETENTION_HOURS keeps ${retentionHours} h)`,
    );
  if (f.queue !== undefined) await mustExist(f.queue, f.group);
  const { rows } = await readDb().execute<{ now: string; series: TrendSeries[] | null }>(
    trendsStatement({ ...f, minutes }, sampleSeconds),
  );
  return { now: rows[0].now, minutes, sampleSeconds, series: rows[0].series ?? [] };
}

/**
 * The one statement of `trends`. Each read is one range of an index bounded by the window: a queue
 * or a group, its primary key (queue_id, consumer_group, at); every queue, the partial index of the
 * queues' own rows (stats_samples_queues), never the groups' rows.
 */
export function trendsStatement(
  f: { queue?: string; group?: string; minutes: number; points?: number },
  sampleSeconds: number,
) {
  const which =
    f.queue === undefined ? sql`true` : sql`s.queue_id = (select q.id from queen.queues q where q.name = ${f.queue})`;
  const rate = (column: string) =>
    sql.raw(`json_agg(round((s.${column} / s.secs)::numeric, 3)::float8 order by s.at) as ${column}`);
  const total = (column: string) => sql.raw(`sum(greatest(s.${column}, 0)) as ${column}`);
  const start = sql`now() - make_interval(mins => ${f.minutes})`;
  const bucket =
    f.points === undefined
      ? sql`extract(epoch from s.at)`
      : sql`width_bucket(extract(epoch from s.at)::float8, extract(epoch from ${start})::float8, extract(epoch from now())::float8, ${f.points}::int)`;
  return sql`
    with raw as (
      select q.name as queue, nullif(s.consumer_group, '') as grp, s.at,
             extract(epoch from s.at - lag(s.at) over w)::float8 as secs,
             s.pushed - lag(s.pushed) over w as pushed, s.delivered - lag(s.delivered) over w as delivered,
             s.acked - lag(s.acked) over w as acked, s.failed - lag(s.failed) over w as failed, s.lag
      from queen.stats_samples s
      join queen.queues q on q.id = s.queue_id
      where ${which} and ${f.group === undefined ? sql`s.consumer_group = ''` : sql`s.consumer_group = ${f.group}`}
        -- from the sample before the window, whose difference makes the window's first rate
        and s.at >= now() - make_interval(mins => ${f.minutes}, secs => ${3 * sampleSeconds})
      window w as (partition by s.queue_id, s.consumer_group order by s.at)
    ),
    s as (select s.*, ${bucket} as bucket from raw s where s.secs > 0 and s.at >= ${start}),
    buckets as (
      select s.queue, s.grp, max(s.at) as at, sum(s.secs) as secs, ${total('pushed')}, ${total('delivered')},
             ${total('acked')}, ${total('failed')}, (array_agg(s.lag order by s.at desc))[1] as lag
      from s group by s.queue, s.grp, s.bucket
    ),
    series as (
      select s.queue, s.grp as "group", json_agg(extract(epoch from s.at)::float8 order by s.at) as at,
             ${rate('pushed')}, ${rate('delivered')}, ${rate('acked')}, ${rate('failed')},
             json_agg(s.lag order by s.at) as lag
      from buckets s group by s.queue, s.grp
    )
    select queen.iso(now()) as now,
           (select json_agg(x order by x.queue, x."group" nulls first) from series x) as series`;
}

async function mustExist(queue: string, group: string | undefined) {
  const { rows } = await readDb().execute<{ queue: boolean; group: boolean }>(sql`
    select exists (select 1 from queen.queues q where q.name = ${queue}) as queue,
           exists (select 1 from queen.queue_groups g join queen.queues q on q.id = g.queue_id
                   where q.name = ${queue} and g.consumer_group = ${group ?? null}) as group`);
  if (!rows[0].queue) throw notFound('queue not found');
  if (group !== undefined && !rows[0].group) throw notFound(`group not found on queue ${queue}`);
}
