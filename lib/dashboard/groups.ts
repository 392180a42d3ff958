import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { badRequest } from '@/lib/broker/errors';
import { name, parseWith, queryInteger } from '@/lib/broker/validate';
import { GROWING_MINUTES, GROWTH_MIN_MESSAGES, GROWTH_MIN_RATIO } from './signals';

/** One (group, queue): the groups page's row. */
export interface GroupQueue {
  queue: string;
  partitions: number;
  /** messages stored above the group's cursors (group_figures: the maintained counters) */
  lag: number;
  /** how long the oldest message the group has not done has waited, null when none */
  lagSeconds: number | null;
  liveLeases: number;
  expiredLeases: number;
  paused: number;
  subscription: { mode: string; startAt: string | null } | null;
  /** the lag sampled over the window: [epoch seconds, messages] */
  trend: [number, number][];
  /** the lag grew over the last GROWING_MINUTES: from what, to what */
  growing: { from: number; to: number } | null;
}

export interface Group {
  group: string;
  lag: number;
  lagSeconds: number | null;
  /** holders that claimed for the group lately, most recent first */
  members: { holder: string; seenAt: string }[];
  liveLeases: number;
  expiredLeases: number;
  paused: number;
  growing: boolean;
  queues: GroupQueue[];
}

export interface GroupList {
  now: string;
  minutes: number;
  memberMinutes: number;
  groups: Group[];
}

/**
 * `growth`: per (queue, group) of `g` (a CTE with queue_id, consumer_group), the lag GROWING_MINUTES ago
 * (`from_lag`), the lowest since (`low`) and how many samples since (`n`); `growing(lag)` judges it.
 */
function growthCte(sampleSeconds: number) {
  return sql`growth as (
      select b.queue_id, b.consumer_group, b.lag as from_lag,
             (select min(s.lag) from queen.stats_samples s
              where s.queue_id = b.queue_id and s.consumer_group = b.consumer_group and s.at > b.at) as low,
             (select count(*) from queen.stats_samples s
              where s.queue_id = b.queue_id and s.consumer_group = b.consumer_group and s.at > b.at) as n
      from (select distinct on (s.queue_id, s.consumer_group) s.queue_id, s.consumer_group, s.lag, s.at
            from g join queen.stats_samples s on s.queue_id = g.queue_id and s.consumer_group = g.consumer_group
            where s.at <= now() - make_interval(mins => ${GROWING_MINUTES})
              and s.at > now() - make_interval(mins => ${GROWING_MINUTES}, secs => ${4 * sampleSeconds})
            order by s.queue_id, s.consumer_group, s.at desc) b
    )`;
}

/** The growth rule (see GROWING_MINUTES) for a lag now `lag` against `b`, the row of `growth` joined as b. */
const growing = (lag: SQL) =>
  sql`(${lag} > 0 and b.n >= 2 and b.low > b.from_lag
       and ${lag} - b.from_lag >= greatest(${GROWTH_MIN_MESSAGES}::float8, b.from_lag * ${GROWTH_MIN_RATIO}::float8))`;
/** Members: holders that claimed for the group within this many minutes. */
export const MEMBER_MINUTES = 15;

export const groupsQuery = z.object({
  group: name.optional(),
  minutes: queryInteger(1, 31 * 24 * 60).optional(),
});

/**
 * Every consumer group with its queues: lag in messages (the maintained figures) and in time (the
 * oldest pending message's age), the lag's trend from the stats samples (30 points over `minutes`),
 * members (holders that claimed lately, sql/024), live and expired leases, pauses, subscription.
 * Leases and pauses are counted through the cursors' partial indexes, so the cost follows the
 * groups, leases and pauses, not the partitions.
 */
export async function listGroups(search: URLSearchParams): Promise<GroupList> {
  const f = parseWith(groupsQuery, Object.fromEntries(search), 'query');
  const minutes = f.minutes ?? 60;
  const { retentionHours, sampleSeconds } = config().stats;
  if (minutes > retentionHours * 60)
    throw badRequest(
      `minutes: must be at most ${retentionHours * 60} (STATS_RETENTION_HOURS keeps ${retentionHours} h)`,
    );
  const group = f.group ?? null;
  const { rows } = await readDb().execute<{ now: string; groups: Group[] | null }>(sql`
    with g as (
      select g.* from queen.group_figures() g where ${group}::text is null or g.consumer_group = ${group}
    ),
    leases as (
      select c.queue_id, c.consumer_group, count(*) filter (where c.lease_expires_at > now())::int as live,
             count(*) filter (where c.lease_expires_at <= now())::int as expired
      from queen.cursors c
      where c.lease_id is not null and (${group}::text is null or c.consumer_group = ${group})
      group by c.queue_id, c.consumer_group
    ),
    paused as (
      select c.queue_id, c.consumer_group, count(*)::int as n from queen.cursors c
      where c.paused and (c.paused_until is null or c.paused_until > now()) and (${group}::text is null or c.consumer_group = ${group})
      group by c.queue_id, c.consumer_group
    ),
    samples as (
      select s.queue_id, s.consumer_group, s.at, s.lag,
             width_bucket(extract(epoch from s.at)::float8, extract(epoch from now() - make_interval(mins => ${minutes}))::float8,
                          extract(epoch from now())::float8 + 1, 30) as bucket
      from g join queen.stats_samples s on s.queue_id = g.queue_id and s.consumer_group = g.consumer_group
      where s.at >= now() - make_interval(mins => ${minutes})
    ),
    trend as (
      select b.queue_id, b.consumer_group, json_agg(json_build_array(extract(epoch from b.at)::float8, b.lag) order by b.at) as points
      from (select distinct on (s.queue_id, s.consumer_group, s.bucket) s.* from samples s
            order by s.queue_id, s.consumer_group, s.bucket, s.at desc) b
      group by b.queue_id, b.consumer_group
    ),
    ${growthCte(sampleSeconds)},
    rows as (
      select g.consumer_group, json_build_object(
               'queue', q.name, 'partitions', g.partitions, 'lag', g.lag::float8,
               'lagSeconds', extract(epoch from now() - g.oldest_pending)::float8,
               'liveLeases', coalesce(l.live, 0), 'expiredLeases', coalesce(l.expired, 0), 'paused', coalesce(pz.n, 0),
               'subscription', (select json_build_object('mode', sub.mode, 'startAt', queen.iso(sub.start_at))
                                from queen.subscriptions sub where sub.queue_id = g.queue_id and sub.consumer_group = g.consumer_group),
               'trend', coalesce(t.points, '[]'),
               'growing', case when ${growing(sql`g.lag`)} then json_build_object('from', b.from_lag, 'to', g.lag) end) as queue,
             g.lag, g.oldest_pending, coalesce(l.live, 0) as live, coalesce(l.expired, 0) as expired, coalesce(pz.n, 0) as paused,
             coalesce(${growing(sql`g.lag`)}, false) as growing, q.name as queue_name
      from g
      join queen.queues q on q.id = g.queue_id
      left join leases l on l.queue_id = g.queue_id and l.consumer_group = g.consumer_group
      left join paused pz on pz.queue_id = g.queue_id and pz.consumer_group = g.consumer_group
      left join trend t on t.queue_id = g.queue_id and t.consumer_group = g.consumer_group
      left join growth b on b.queue_id = g.queue_id and b.consumer_group = g.consumer_group
    ),
    members as (
      select m.consumer_group, json_agg(json_build_object('holder', m.holder, 'seenAt', queen.iso(m.seen_at)) order by m.seen_at desc) as list
      from (select m.consumer_group, m.holder, max(m.seen_at) as seen_at from queen.group_members m
            where m.seen_at > now() - make_interval(mins => ${MEMBER_MINUTES}) and (${group}::text is null or m.consumer_group = ${group})
            group by m.consumer_group, m.holder) m
      group by m.consumer_group
    ),
    groups as (
      select r.consumer_group as "group", sum(r.lag)::float8 as lag,
             extract(epoch from now() - min(r.oldest_pending))::float8 as "lagSeconds",
             coalesce((select m.list from members m where m.consumer_group = r.consumer_group), '[]') as members,
             sum(r.live)::int as "liveLeases", sum(r.expired)::int as "expiredLeases", sum(r.paused)::int as paused,
             coalesce(bool_or(r.growing), false) as growing,
             json_agg(r.queue order by r.queue_name) as queues
      from rows r group by r.consumer_group
    )
    select queen.iso(now()) as now, (select json_agg(x order by x.growing desc, x.lag desc, x."group") from groups x) as groups`);
  return { now: rows[0].now, minutes, memberMinutes: MEMBER_MINUTES, groups: rows[0].groups ?? [] };
}

/** (queue, group) pairs whose lag is growing (see `listGroups`), for the Overview's problems. */
export async function growingGroups(): Promise<{ queue: string; group: string; from: number; to: number }[]> {
  const { sampleSeconds } = config().stats;
  const { rows } = await readDb().execute<{ queue: string; group: string; from: number; to: number }>(sql`
    with g as (select * from queen.group_figures()),
    ${growthCte(sampleSeconds)}
    select q.name as queue, g.consumer_group as "group", b.from_lag::float8 as "from", g.lag::float8 as "to"
    from g
    join growth b on b.queue_id = g.queue_id and b.consumer_group = g.consumer_group
    join queen.queues q on q.id = g.queue_id
    where ${growing(sql`g.lag`)}
    order by q.name, g.consumer_group`);
  return rows;
}
