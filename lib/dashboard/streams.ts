import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';

export interface StreamShard {
  partitionId: string;
  /** null when the source partition is gone (its state stays) */
  partition: string | null;
  stateKeys: number;
  stateBytes: number;
  cycles: number;
  refused: number;
  lastCycleAt: string | null;
  lastRefusedAt: string | null;
  lastRefusal: string | null;
}

export interface StreamingQuery {
  queryId: string;
  name: string;
  sourceQueue: string;
  sinkQueue: string | null;
  configHash: string;
  createdAt: string;
  updatedAt: string;
  /** the group its cycles ack for (streams.<name> until one did) */
  consumerGroup: string;
  /** messages of the source queue the group has not consumed; null when the group never joined it */
  lag: number | null;
  cycles: number;
  refused: number;
  stateKeys: number;
  stateBytes: number;
  lastCycleAt: string | null;
  /** partitions with state or cycles, most state first */
  shards: StreamShard[];
}

/**
 * Every streaming query with its figures, from the shards' maintained counters and the source
 * queue's group counters (no state row is read). Names in order.
 */
export async function listStreamingQueries(): Promise<{ now: string; queries: StreamingQuery[] }> {
  const { rows } = await db().execute<{ now: string; queries: StreamingQuery[] | null }>(sql`
    with g as (
      select q.*, coalesce((select s.consumer_group from queen_streams.shards s
                            where s.query_id = q.id and s.consumer_group is not null
                            order by s.last_cycle_at desc nulls last limit 1), 'streams.' || q.name) as grp,
             (select x.id from queen.queues x where x.name = q.source_queue) as source_id
      from queen_streams.queries q
    )
    select queen.iso(now()) as now, (select json_agg(json_build_object(
      'queryId', g.id, 'name', g.name, 'sourceQueue', g.source_queue, 'sinkQueue', g.sink_queue, 'configHash', g.config_hash,
      'createdAt', queen.iso(g.created_at), 'updatedAt', queen.iso(g.updated_at), 'consumerGroup', g.grp,
      'lag', case when exists (select 1 from queen.queue_groups qg where qg.queue_id = g.source_id and qg.consumer_group = g.grp)
                  then greatest(coalesce((select sum(s.messages) from queen.queue_stats s where s.queue_id = g.source_id), 0)
                                - coalesce((select sum(s.committed) from queen.group_stats s
                                            where s.queue_id = g.source_id and s.consumer_group = g.grp), 0), 0) end,
      'cycles', f.cycles, 'refused', f.refused, 'stateKeys', f.state_keys, 'stateBytes', f.state_bytes,
      'lastCycleAt', queen.iso(f.last_cycle_at),
      'shards', coalesce((select json_agg(json_build_object(
                   'partitionId', s.partition_id, 'partition', p.name, 'stateKeys', s.state_keys, 'stateBytes', s.state_bytes,
                   'cycles', s.cycles, 'refused', s.refused, 'lastCycleAt', queen.iso(s.last_cycle_at),
                   'lastRefusedAt', queen.iso(s.last_refused_at), 'lastRefusal', s.last_refusal)
                   order by s.state_bytes desc, s.partition_id)
                 from queen_streams.shards s left join queen.partitions p on p.id = s.partition_id
                 where s.query_id = g.id), '[]'))
      order by g.name)
     from g join queen_streams.figures() f on f.query_id = g.id) as queries`);
  return { now: rows[0].now, queries: rows[0].queries ?? [] };
}
