import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';

export type QueueHealth = {
  name: string;
  namespace: string;
  task: string;
  leaseTime: number;
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
  /** Why this queue needs a look, worst first; empty when healthy. */
  problems: { level: 'alert' | 'warn'; text: string }[];
};

export interface Overview {
  now: string;
  tookMs: number;
  maintenance: { enabled: boolean; reason: string | null; by: string | null; at: string | null };
  queues: QueueHealth[];
}

/** Waiting longer than this is worth a warning on the overview. */
export const OLD_PENDING_SECONDS = 300;

export async function overview(): Promise<Overview> {
  const started = performance.now();
  const { rows } = await db().execute<Omit<QueueHealth, 'problems'>>(sql`
    with per_cursor as (
      select p.queue_id, c.consumer_group, greatest(p.head_offset - c.committed_offset, 0) as lag,
             c.lease_id is not null and c.lease_expires_at > now() as live,
             c.lease_id is not null and c.lease_expires_at <= now() as expired,
             c.lease_id is not null and c.lease_expires_at > now()
               and c.lease_acquired_at < now() - make_interval(secs => 2 * q.lease_time) as held_long,
             c.redeliveries, c.dead_letters,
             c.paused and (c.paused_until is null or c.paused_until > now()) as paused,
             case when p.head_offset > c.committed_offset then
               (select s.created_at from queen.segments s
                where s.partition_id = c.partition_id and s.last_offset > c.committed_offset
                order by s.first_offset limit 1) end as oldest_pending
      from queen.cursors c
      join queen.partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id
    ),
    per_group as (
      select queue_id, consumer_group, sum(lag) as lag from per_cursor group by queue_id, consumer_group
    )
    select q.name, q.namespace, q.task, q.lease_time as "leaseTime",
           (select count(*)::int from queen.partitions p where p.queue_id = q.id) as partitions,
           (select coalesce(sum(p.head_offset), 0)::float8 from queen.partitions p where p.queue_id = q.id) as messages,
           (select count(*)::int from per_group g where g.queue_id = q.id) as groups,
           coalesce((select max(g.lag)::float8 from per_group g where g.queue_id = q.id), 0) as pending,
           (select extract(epoch from now() - min(c.oldest_pending))::float8 from per_cursor c where c.queue_id = q.id) as "oldestPendingSeconds",
           coalesce(x.live, 0) as "liveLeases", coalesce(x.expired, 0) as "expiredLeases", coalesce(x.held_long, 0) as "stuckLeases",
           coalesce(x.redeliveries, 0) as redeliveries, coalesce(x.dead_letters, 0) as "deadLetters", coalesce(x.paused, 0) as paused
    from queen.queues q
    left join (
      select queue_id, count(*) filter (where live)::int as live, count(*) filter (where expired)::int as expired,
             count(*) filter (where held_long)::int as held_long, sum(redeliveries)::float8 as redeliveries,
             sum(dead_letters)::float8 as dead_letters, count(*) filter (where paused)::int as paused
      from per_cursor group by queue_id
    ) x on x.queue_id = q.id
    order by q.name`);
  const { now, maintenance } = await maintenanceState();
  return { now, tookMs: Math.round(performance.now() - started), maintenance, queues: rows.map((q) => ({ ...q, problems: problemsOf(q) })) };
}

export type MaintenanceState = Pick<Overview, 'now' | 'maintenance'>;

/** Pop maintenance with who turned it on, why and when: cheap enough for a banner on every page. */
export async function maintenanceState(): Promise<MaintenanceState> {
  const { rows } = await db().execute<{ now: string; value: { enabled?: boolean; reason?: string; by?: string; at?: string } }>(sql`
    select queen.iso(now()) as now, coalesce((select value from queen.system_state where key = 'pop_maintenance'), '{}') as value`);
  const { now, value } = rows[0];
  return { now, maintenance: { enabled: value.enabled === true, reason: value.reason ?? null, by: value.by ?? null, at: value.at ?? null } };
}

function problemsOf(q: Omit<QueueHealth, 'problems'>): QueueHealth['problems'] {
  const out: QueueHealth['problems'] = [];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (q.expiredLeases > 0) out.push({ level: 'alert', text: `${plural(q.expiredLeases, 'lease')} expired, not yet reclaimed` });
  if (q.stuckLeases > 0) out.push({ level: 'alert', text: `${plural(q.stuckLeases, 'lease')} held over twice the lease time` });
  if (q.deadLetters > 0) out.push({ level: 'warn', text: `${plural(q.deadLetters, 'dead letter')}` });
  if (q.paused > 0) out.push({ level: 'warn', text: `${plural(q.paused, 'paused cursor')}` });
  if (q.oldestPendingSeconds !== null && q.oldestPendingSeconds > OLD_PENDING_SECONDS) {
    out.push({ level: 'warn', text: `oldest pending message waits ${Math.round(q.oldestPendingSeconds / 60)} min` });
  }
  return out;
}
