-- Browsing, searching and previewing (issue 8, items 9 and 12): read-only functions and the
-- indexes that keep every lookup an index walk.

-- Search by message id (UUIDv7): without this a pasted id scans every message.
create index messages_id on queen.messages (id);
-- Queue-name suggestions and search by prefix (`name like 'x%'` on a btree needs pattern ops).
create index queues_name_prefix on queen.queues (name text_pattern_ops);

-- Where queen.seek / queen.seek_partition move a cursor, and what that does to the group, without
-- moving anything: per partition of the queue (or the one partition named), the committed offset
-- now (a cursor the seek would create starts at the group's seed, as queen.join_group seeds it),
-- the target, how many messages the group has not consumed that the seek skips, how many it has
-- consumed (committed or acked inside a lease) that it replays, and whether a live lease ends.
-- No row when the queue or the partition is unknown.
create function queen.seek_preview(p_group text, p_queue text, p_partition text, p_to_end boolean, p_timestamp timestamptz)
returns table (partition_id uuid, partition text, committed bigint, target bigint, skipped bigint, replayed bigint, ends_lease boolean)
language sql stable set plan_cache_mode = force_custom_plan set jit = off as $$
  select p.id, p.name, coalesce(c.committed_offset, s.seed), t.target,
         greatest(t.target - coalesce(c.committed_offset, s.seed), 0)
           - (select count(*) from unnest(c.acked_offsets) a where a <= t.target),
         greatest(coalesce(c.committed_offset, s.seed) - t.target, 0)
           + (select count(*) from unnest(c.acked_offsets) a where a > t.target),
         coalesce(c.lease_id is not null and c.lease_expires_at > now(), false)
  from queen.queues q
  join queen.partitions p on p.queue_id = q.id and (p_partition is null or p.name = p_partition)
  join lateral queen.seeds(q.id, p_group) s on s.partition_id = p.id
  left join queen.cursors c on c.partition_id = p.id and c.consumer_group = p_group
  cross join lateral (
    select case when p_to_end then p.head_offset
                else coalesce((select s.first_offset - 1 from queen.segments s
                               where s.partition_id = p.id and s.created_at >= p_timestamp
                               order by s.created_at, s.first_offset limit 1), p.head_offset) end as target) t
  where q.name = p_queue
$$;
