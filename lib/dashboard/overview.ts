import { sql } from 'drizzle-orm';
import { db, readDb } from '@/db/pool';
import { DEFAULT_MIN_DELIVERIES, firstOffsetAttempts, stuckLease } from '@/lib/broker/leases';
import { plural } from './format';
import { growingGroups } from './groups';
import { countedPartitions } from './queue';
import { GROWING_MINUTES } from './signals';
import { groupsHref, overviewLinks } from './links';

export type QueueHealth = {
  name: string;
  namespace: string;
  task: string;
  leaseTime: number;
  /** its partitions, but for an empty Default partition (configure creates one whether it is used or not) */
  partitions: number;
  messages: number;
  groups: number;
  pending: number;
  oldestPendingSeconds: number | null;
  liveLeases: number;
  expiredLeases: number;
  stuckLeases: number;
  redeliveries: number;
  deadLetters: number;
  paused: number;
  /** Why this queue needs a look, worst first, each with the page that lists those things; empty when healthy. */
  problems: { level: 'alert' | 'warn'; text: string; href: string }[];
};

export interface Overview {
  now: string;
  tookMs: number;
  maintenance: { enabled: boolean; reason: string | null; by: string | null; at: string | null };
  queues: QueueHealth[];
}

/** Waiting longer than this is worth a warning on the overview. */
export const OLD_PENDING_SECONDS = 300;

/**
 * The dead letters that exist now, per queue: what /dead-letters?queue= lists. The groups' counters
 * (group_stats, cursors.dead_letters) count every dead-lettering ever, requeued and discarded ones too;
 * queen.dead_letter_counts (sql/018) one row per partition and group holding dead letters now, so
 * the cost follows those pairs, not a poison flood's millions of rows.
 */
const deadLettersPerQueue = sql`dead_letters as (
      select p.queue_id, sum(c.n) as n from queen.dead_letter_counts c join queen.partitions p on p.id = c.partition_id group by p.queue_id
    )`;

/**
 * One row per queue, from the maintained figures (sql/010) and the partial indexes on leases and
 * pauses: its cost follows the number of queues, groups and leases, not partitions or messages.
 * Pending is the largest lag of any group; with no group yet, every message is pending.
 */
export async function overview(): Promise<Overview> {
  const started = performance.now();
  const { rows } = await readDb().execute<Omit<QueueHealth, 'problems'>>(sql`
    with groups as (
      select g.queue_id, count(*)::int as n, max(g.lag) as max_lag, min(g.oldest_pending) as oldest_pending,
             sum(g.redeliveries) as redeliveries
      from queen.group_figures() g group by g.queue_id
    ),
    ${deadLettersPerQueue},
    leases as (
      select c.queue_id, count(*) filter (where c.lease_expires_at > now())::int as live,
             count(*) filter (where c.lease_expires_at <= now())::int as expired,
             count(*) filter (where ${stuckLease()})::int as stuck
      from queen.cursors c
      join queen.queues q on q.id = c.queue_id
      ${firstOffsetAttempts}
      where c.lease_id is not null group by c.queue_id
    ),
    paused as (
      select c.queue_id, count(*)::int as n from queen.cursors c
      where c.paused and (c.paused_until is null or c.paused_until > now()) group by c.queue_id
    )
    select q.name, q.namespace, q.task, q.lease_time as "leaseTime",
           -- the Default partition configure creates is not counted until something is pushed to it
           ${countedPartitions('q', 'f')} as partitions,
           coalesce(f.messages, 0)::float8 as messages,
           coalesce(g.n, 0) as groups,
           (case when g.n is null then coalesce(f.stored, 0) else g.max_lag end)::float8 as pending,
           extract(epoch from now() - g.oldest_pending)::float8 as "oldestPendingSeconds",
           coalesce(l.live, 0) as "liveLeases", coalesce(l.expired, 0) as "expiredLeases", coalesce(l.stuck, 0) as "stuckLeases",
           coalesce(g.redeliveries, 0)::float8 as redeliveries, coalesce(d.n, 0)::float8 as "deadLetters",
           coalesce(pz.n, 0) as paused
    from queen.queues q
    left join queen.queue_figures() f on f.queue_id = q.id
    left join groups g on g.queue_id = q.id
    left join leases l on l.queue_id = q.id
    left join paused pz on pz.queue_id = q.id
    left join dead_letters d on d.queue_id = q.id
    order by q.name`);
  const [{ now, maintenance }, growing] = await Promise.all([maintenanceState(), growingGroups()]);
  return {
    now,
    tookMs: Math.round(performance.now() - started),
    maintenance,
    queues: rows.map((q) => ({
      ...q,
      problems: problemsOf(
        q,
        growing.filter((g) => g.queue === q.name),
      ),
    })),
  };
}

export type MaintenanceState = Pick<Overview, 'now' | 'maintenance'>;

/**
 * Pop maintenance with who turned it on, why and when: cheap enough for a banner on every page.
 * Read on the primary even with a replica: the toggle acts on it, and must not show the old state.
 */
export async function maintenanceState(): Promise<MaintenanceState> {
  const { rows } = await db().execute<{
    now: string;
    value: { enabled?: boolean; reason?: string; by?: string; at?: string };
  }>(sql`
    select queen.iso(now()) as now, coalesce((select value from queen.system_state where key = 'pop_maintenance'), '{}') as value`);
  const { now, value } = rows[0];
  return {
    now,
    maintenance: {
      enabled: value.enabled === true,
      reason: value.reason ?? null,
      by: value.by ?? null,
      at: value.at ?? null,
    },
  };
}

function problemsOf(
  q: Omit<QueueHealth, 'problems'>,
  growing: { group: string; from: number; to: number }[],
): QueueHealth['problems'] {
  const out: QueueHealth['problems'] = [];
  const to = overviewLinks(q.name);
  if (q.expiredLeases > 0)
    out.push({
      level: 'alert',
      text: `${plural(q.expiredLeases, 'lease')} expired, not yet reclaimed`,
      href: to.leases('expired'),
    });
  if (q.stuckLeases > 0) {
    out.push({
      level: 'alert',
      text: `${plural(q.stuckLeases, 'stuck lease')} (past their expiry, or first message delivered over ${DEFAULT_MIN_DELIVERIES} times)`,
      href: to.leases('stuck'),
    });
  }
  // a group falling behind (a hung lease, a slow consumer), though another group's lag is the queue's largest
  for (const g of growing) {
    out.push({
      level: 'warn',
      text: `group ${g.group}'s lag grew from ${plural(g.from, 'message')} to ${plural(g.to, 'message')} in ${GROWING_MINUTES} min`,
      href: groupsHref({ group: g.group }),
    });
  }
  if (q.deadLetters > 0)
    out.push({ level: 'warn', text: `${plural(q.deadLetters, 'dead letter')}`, href: to.deadLetters });
  if (q.paused > 0) out.push({ level: 'warn', text: `${plural(q.paused, 'paused cursor')}`, href: to.attention });
  if (q.groups === 0 && q.pending > 0)
    out.push({ level: 'warn', text: `${plural(q.pending, 'message')} and no consumer group yet`, href: to.queue });
  if (q.oldestPendingSeconds !== null && q.oldestPendingSeconds > OLD_PENDING_SECONDS) {
    out.push({
      level: 'warn',
      text: `oldest pending message waits ${Math.round(q.oldestPendingSeconds / 60)} min`,
      href: to.oldestPending,
    });
  }
  return out;
}
