import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { notFound } from '@/lib/http/errors';
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

/** Message counts are those of queue mode (`__QUEUE_MODE__`); see docs/decisions.md. */
export async function listQueues(): Promise<QueueSummary[]> {
  const { rows } = await db().execute<{
    id: string; name: string; namespace: string; task: string; created_at: string;
    partitions: number; total: number; processing: number; committed: number;
  }>(sql`
    select q.id, q.name, q.namespace, q.task, queen.iso(q.created_at) as created_at,
           coalesce(f.partitions, 0)::int as partitions,
           coalesce(f.messages, 0)::float8 as total,
           coalesce(g.committed, 0)::float8 as committed,
           coalesce((select sum(c.lease_end_offset - c.committed_offset) from queen.cursors c
                     where c.queue_id = q.id and c.lease_id is not null and c.lease_expires_at > now()
                       and c.consumer_group = '__QUEUE_MODE__'), 0)::float8 as processing
    from queen.queues q
    left join queen.queue_figures() f on f.queue_id = q.id
    left join queen.group_figures() g on g.queue_id = q.id and g.consumer_group = '__QUEUE_MODE__'
    order by q.name`);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    namespace: r.namespace,
    task: r.task,
    createdAt: r.created_at,
    partitions: r.partitions,
    messages: { total: r.total, pending: r.total - r.committed - r.processing, processing: r.processing },
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
  const { rows } = await db().execute<Omit<QueueDetail, 'partitions'> & { partitions: QueueDetail['partitions'] | null }>(sql`
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

export async function deleteQueue(name: string): Promise<{ deleted: true; queue: string; existed: boolean }> {
  const { rows } = await db().execute<{ existed: boolean }>(sql`select queen.delete_queue(${name}) as existed`);
  return { deleted: true, queue: name, existed: rows[0].existed };
}
