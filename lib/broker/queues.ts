import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { notFound } from './errors';
import { queryReason } from './validate';
import type { QueueOptions } from './options';

export interface QueueSummary {
  id: string;
  name: string;
  namespace: string;
  task: string;
  createdAt: string;
  partitions: number;
  messages: { total: number; pending: number; processing: number };
}

/** A queue's figures: `committed` and `processing` are those of queue mode (`__QUEUE_MODE__`); see docs/decisions.md. */
export type QueueCounts = {
  id: string;
  name: string;
  namespace: string;
  task: string;
  createdAt: string;
  partitions: number;
  /** messages stored (pushed and not yet removed) */
  total: number;
  /** messages ever pushed */
  pushed: number;
  committed: number;
  processing: number;
  /** stored messages queue mode has not consumed, outside its live leases */
  pending: number;
  failures: number;
  deadLetters: number;
};

/**
 * Every queue's figures, from the maintained counters (sql/010) and the live leases of queue mode.
 * `total` is what is stored; `pending` what queue mode has not consumed of it outside its live
 * leases: its lag (offsets ahead of its cursors, docs/decisions.md) less what it holds, never more
 * than what is stored; every stored message before queue mode first pops.
 */
export async function queueCounts(): Promise<QueueCounts[]> {
  const { rows } = await db().execute<QueueCounts>(sql`
    select x.id, x.name, x.namespace, x.task, x."createdAt", x.partitions, x.total, x.pushed, x.committed,
           x.processing, x.failures, x."deadLetters",
           greatest(least(coalesce(x.lag, x.total), x.total) - x.processing, 0)::float8 as pending
    from (
      select q.id, q.name, q.namespace, q.task, queen.iso(q.created_at) as "createdAt",
             coalesce(f.partitions, 0)::int as partitions,
             coalesce(f.stored, 0)::float8 as total,
             coalesce(f.messages, 0)::float8 as pushed,
             coalesce(qm.committed, 0)::float8 as committed,
             qm.lag::float8 as lag,
             coalesce((select sum(c.lease_end_offset - c.committed_offset) from queen.cursors c
                       where c.queue_id = q.id and c.lease_id is not null and c.lease_expires_at > now()
                         and c.consumer_group = '__QUEUE_MODE__'), 0)::float8 as processing,
             coalesce(g.failures, 0)::float8 as failures, coalesce(g.dead_letters, 0)::float8 as "deadLetters"
      from queen.queues q
      left join queen.queue_figures() f on f.queue_id = q.id
      left join queen.group_figures() qm on qm.queue_id = q.id and qm.consumer_group = '__QUEUE_MODE__'
      left join (select gf.queue_id, sum(gf.failures) as failures, sum(gf.dead_letters) as dead_letters
                 from queen.group_figures() gf group by gf.queue_id) g on g.queue_id = q.id) x
    order by x.name`);
  return rows;
}

/** Pending: stored, not yet consumed in queue mode and not inside one of its live leases. */
export const pendingOf = (q: Pick<QueueCounts, 'pending'>) => q.pending;

export async function listQueues(): Promise<QueueSummary[]> {
  return (await queueCounts()).map((q) => ({
    id: q.id,
    name: q.name,
    namespace: q.namespace,
    task: q.task,
    createdAt: q.createdAt,
    partitions: q.partitions,
    messages: { total: q.total, pending: pendingOf(q), processing: q.processing },
  }));
}

export interface QueueDetail {
  id: string;
  name: string;
  namespace: string;
  task: string;
  configured: boolean;
  createdAt: string;
  options: QueueOptions;
  partitions: { id: string; name: string; createdAt: string; headOffset: number; lastPushAt: string | null }[];
}

export async function getQueue(name: string): Promise<QueueDetail> {
  const { rows } = await db().execute<
    Omit<QueueDetail, 'partitions'> & { partitions: QueueDetail['partitions'] | null }
  >(sql`
    select q.id, q.name, q.namespace, q.task, q.configured, queen.iso(q.created_at) as "createdAt",
           queen.queue_options(q) as options,
           (select json_agg(json_build_object(
                     'id', p.id, 'name', p.name, 'createdAt', queen.iso(p.created_at),
                     'headOffset', p.head_offset, 'lastPushAt', queen.iso(p.last_push_at))
                   order by p.name)
            from queen.partitions p where p.queue_id = q.id) as partitions
    from queen.queues q
    where q.name = ${name}`);
  if (rows.length === 0) throw notFound(`queue ${JSON.stringify(name)} not found`);
  return { ...rows[0], partitions: rows[0].partitions ?? [] };
}

/**
 * Deletes a queue and everything of it; audited as `queue.delete` with what it removed (`reason`, from
 * the `reason` query parameter, is optional: Queen's clients send none).
 */
export async function deleteQueue(
  name: string,
  actor: string,
  search: URLSearchParams,
): Promise<{ deleted: true; queue: string; existed: boolean }> {
  const reason = queryReason(search);
  const { rows } = await db().execute<{ existed: boolean }>(
    sql`select queen.delete_queue(${name}, ${actor}, ${reason}) as existed`,
  );
  return { deleted: true, queue: name, existed: rows[0].existed };
}
