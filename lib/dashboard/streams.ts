import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { parseWith, queryInteger } from '@/lib/broker/validate';
import { MAX_STREAMS_PAGE_SIZE, SHARDS_LISTED, STREAMS_PAGE_SIZE } from './streams-paging';

export const streamsQuery = z.object({
  page: queryInteger(1).optional(),
  pageSize: queryInteger(1, MAX_STREAMS_PAGE_SIZE).optional(),
});

export interface StreamingQueryList {
  now: string;
  /** queries registered, on every page */
  total: number;
  queries: StreamingQuery[];
}

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
  /** shards (source partitions with state or cycles) */
  shardCount: number;
  /** shards that hold state */
  statePartitions: number;
  /** the first SHARDS_LISTED shards, most state first */
  shards: StreamShard[];
}

/**
 * Streaming queries with their figures, a page of them by name (`page`, `pageSize`: 50 by default,
 * at most 500): from the shards' maintained counters and the source queue's group counters (no
 * state row is read), for the page's queries only. Each lists its first SHARDS_LISTED shards.
 */
export async function listStreamingQueries(search = new URLSearchParams()): Promise<StreamingQueryList> {
  const f = parseWith(streamsQuery, Object.fromEntries(search), 'query');
  const pageSize = f.pageSize ?? STREAMS_PAGE_SIZE;
  const offset = ((f.page ?? 1) - 1) * pageSize;
  const { rows } = await readDb().execute<{ now: string; total: number; queries: StreamingQuery[] | null }>(sql`
    with g as (
      select q.*, f.*,
             coalesce((select s.consumer_group from queen_streams.shards s
                       where s.query_id = q.id and s.consumer_group is not null
                       order by s.last_cycle_at desc nulls last limit 1), 'streams.' || q.name) as grp,
             (select x.id from queen.queues x where x.name = q.source_queue) as source_id
      from (select q.* from queen_streams.queries q order by q.name limit ${pageSize} offset ${offset}) q
      -- the page's shards only, one index walk a query (never a hash of every query's shards)
      cross join lateral (
        select coalesce(sum(s.cycles), 0)::bigint as cycles, coalesce(sum(s.refused), 0)::bigint as refused,
               coalesce(sum(s.state_keys), 0)::bigint as state_keys, coalesce(sum(s.state_bytes), 0)::bigint as state_bytes,
               count(*)::int as shard_count, count(*) filter (where s.state_keys > 0)::int as state_partitions,
               max(s.last_cycle_at) as last_cycle_at
        from queen_streams.shards s where s.query_id = q.id) f
    )
    select queen.iso(now()) as now, (select count(*)::int from queen_streams.queries) as total,
     (select json_agg(json_build_object(
      'queryId', g.id, 'name', g.name, 'sourceQueue', g.source_queue, 'sinkQueue', g.sink_queue, 'configHash', g.config_hash,
      'createdAt', queen.iso(g.created_at), 'updatedAt', queen.iso(g.updated_at), 'consumerGroup', g.grp,
      'lag', case when exists (select 1 from queen.queue_groups qg where qg.queue_id = g.source_id and qg.consumer_group = g.grp)
                  then greatest(coalesce((select sum(s.messages) from queen.queue_stats s where s.queue_id = g.source_id), 0)
                                - coalesce((select sum(s.committed) from queen.group_stats s
                                            where s.queue_id = g.source_id and s.consumer_group = g.grp), 0), 0) end,
      'cycles', g.cycles, 'refused', g.refused, 'stateKeys', g.state_keys, 'stateBytes', g.state_bytes,
      'lastCycleAt', queen.iso(g.last_cycle_at), 'shardCount', g.shard_count, 'statePartitions', g.state_partitions,
      'shards', coalesce((select json_agg(json_build_object(
                   'partitionId', s.partition_id, 'partition', p.name, 'stateKeys', s.state_keys, 'stateBytes', s.state_bytes,
                   'cycles', s.cycles, 'refused', s.refused, 'lastCycleAt', queen.iso(s.last_cycle_at),
                   'lastRefusedAt', queen.iso(s.last_refused_at), 'lastRefusal', s.last_refusal)
                   order by s.state_bytes desc, s.partition_id)
                 from (select s.* from queen_streams.shards s where s.query_id = g.id
                       order by s.state_bytes desc, s.partition_id limit ${SHARDS_LISTED}) s
                 left join queen.partitions p on p.id = s.partition_id), '[]'))
      order by g.name)
     from g) as queries`);
  const r = rows[0];
  return { now: r.now, total: r.total, queries: r.queries ?? [] };
}
