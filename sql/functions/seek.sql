create or replace function queen.seek(p_group text, p_queue text, p_to_end boolean, p_timestamp timestamptz, p_reason text, p_actor text)
returns integer
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_count integer;
  v_changed integer;
  v_moved jsonb;
  v_leases integer;
begin
  select id into v_queue from queen.queues where name = p_queue;
  if v_queue is null then
    return null;
  end if;
  perform queen.join_group(v_queue, p_group);
  perform 1 from queen.queues q where q.id = v_queue for update;
  perform 1 from queen.cursors c where c.queue_id = v_queue and c.consumer_group = p_group
  order by c.partition_id for update;
  with moved as (
    update queen.cursors c set
      committed_offset = t.target,
      acked_offsets = '{}',
      seeded = false,
      lease_id = null, lease_end_offset = null, lease_acquired_at = null, lease_expires_at = null,
      lease_seconds = null, lease_holder = null, lease_extensions = 0, retry_not_before = null
    from (
      select p.id, p.name, old.committed_offset as before, old.lease_id as lease,
             queen.position_at(p.id, p_to_end, p_timestamp) as target
      from queen.partitions p
      join queen.cursors old on old.partition_id = p.id and old.consumer_group = p_group
      where p.queue_id = v_queue
    ) t
    where c.partition_id = t.id and c.consumer_group = p_group
    returning t.id, t.name, t.before, t.target, t.lease
  )
  select count(*)::integer, count(*) filter (where m.before <> m.target)::integer, count(m.lease)::integer,
         coalesce(jsonb_agg(jsonb_build_object('queue', p_queue, 'partition', m.name, 'partitionId', m.id, 'group', p_group,
                                               'from', m.before, 'to', m.target) || queen.lease_ended(m.lease)
                            order by m.rn)
                  filter (where m.listed is not null and m.rn <= queen.audit_partitions_limit()), '[]')
  into v_count, v_changed, v_leases, v_moved
  from (select m.*, row_number() over (order by m.listed nulls last, m.name) as rn
        from (select m.*, case when m.before <> m.target then 0 when m.lease is not null then 1 end as listed
              from moved m) m) m;
  -- A seek back is a replay: the replayed messages' attempt counts start over (their dead-letter
  -- rows stay, as history, and are renewed if they die again).
  delete from queen.message_attempts a
  using queen.cursors c
  where c.queue_id = v_queue and c.consumer_group = p_group
    and a.partition_id = c.partition_id and a.consumer_group = p_group and a."offset" > c.committed_offset;
  perform queen.rebuild_group(v_queue, p_group);
  perform queen.audit(p_actor, 'cursor.seek', 'consumer_group', p_group || '@' || p_queue, p_reason, 'ok',
    jsonb_build_object('toEnd', p_to_end, 'timestamp', queen.iso(p_timestamp), 'queue', p_queue, 'group', p_group,
                       'cursors', v_count, 'partitionsMoved', v_changed, 'leasesEnded', v_leases, 'partitions', v_moved));
  perform queen.emit(jsonb_build_object('type', 'seek', 'queue', p_queue, 'group', p_group, 'toEnd', p_to_end,
    'timestamp', queen.iso(p_timestamp), 'actor', p_actor));
  perform queen.notify_claimable(v_queue);
  return v_count;
end
$$;

-- Moves one partition's cursor of a group, as queen.seek (009) moves every cursor of the queue:
-- to the head, or to just before the first segment created at or after p_timestamp; any lease on
-- it ends, the replayed messages' attempt counts start over; audited with the queue, group and
-- partition in the details. Answers the new committed offset, or null when the queue or the
-- partition is unknown.
create or replace function queen.seek_partition(p_group text, p_queue text, p_partition text, p_to_end boolean, p_timestamp timestamptz,
                                     p_reason text, p_actor text)
returns bigint
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_partition uuid;
  v_head bigint;
  v_old bigint;
  v_lease uuid;
  v_target bigint;
begin
  select q.id, p.id, p.head_offset into v_queue, v_partition, v_head
  from queen.queues q join queen.partitions p on p.queue_id = q.id and p.name = p_partition
  where q.name = p_queue;
  if not found then
    return null;
  end if;
  perform queen.join_group(v_queue, p_group);
  select c.committed_offset, c.lease_id into v_old, v_lease from queen.cursors c
  where c.partition_id = v_partition and c.consumer_group = p_group for update;
  v_target := queen.position_at(v_partition, p_to_end, p_timestamp);
  update queen.cursors c set
    committed_offset = v_target,
    acked_offsets = '{}',
    seeded = false,
    lease_id = null, lease_end_offset = null, lease_acquired_at = null, lease_expires_at = null,
    lease_seconds = null, lease_holder = null, lease_extensions = 0, retry_not_before = null
  where c.partition_id = v_partition and c.consumer_group = p_group;
  delete from queen.message_attempts a
  where a.partition_id = v_partition and a.consumer_group = p_group and a."offset" > v_target;

  insert into queen.backlog as b (partition_id, consumer_group, queue_id, last_claim_at, blocked_until, pending_since)
  select c.partition_id, p_group, v_queue, coalesce(c.last_claim_at, '-infinity'), queen.cursor_block(c),
         queen.pending_since(c.partition_id, c.committed_offset)
  from queen.cursors c
  where c.partition_id = v_partition and c.consumer_group = p_group and v_head > v_target
  on conflict (partition_id, consumer_group) do update
    set blocked_until = excluded.blocked_until, pending_since = excluded.pending_since;
  if v_head <= v_target then
    perform queen.drop_drained(v_partition, p_group, v_target);
  end if;
  perform queen.add_group_stats(jsonb_build_array(jsonb_build_object('queue', v_queue, 'group', p_group, 'committed', v_target - v_old)));

  perform queen.audit(p_actor, 'cursor.seek', 'consumer_group', p_group || '@' || p_queue || '/' || p_partition, p_reason, 'ok',
    jsonb_build_object('toEnd', p_to_end, 'timestamp', queen.iso(p_timestamp), 'queue', p_queue, 'group', p_group,
                       'partition', p_partition, 'partitionId', v_partition, 'from', v_old, 'to', v_target,
                       'cursors', 1, 'partitionsMoved', case when v_old <> v_target then 1 else 0 end,
                       'leasesEnded', case when v_lease is null then 0 else 1 end,
                       'partitions', jsonb_build_array(jsonb_build_object('queue', p_queue, 'partition', p_partition,
                                       'partitionId', v_partition, 'group', p_group, 'from', v_old, 'to', v_target)
                                       || queen.lease_ended(v_lease))));
  perform queen.emit(jsonb_build_object('type', 'seek', 'queue', p_queue, 'partition', p_partition, 'group', p_group,
    'toEnd', p_to_end, 'timestamp', queen.iso(p_timestamp), 'actor', p_actor));
  perform queen.notify_claimable(v_queue);
  return v_target;
end
$$;

-- Where queen.seek / queen.seek_partition move a cursor, and what that does to the group, without
-- moving anything: per partition of the queue (or the one partition named), the committed offset
-- now (a cursor the seek would create starts at the group's seed, as queen.join_group seeds it),
-- the target, how many stored messages the group has not consumed that the seek skips, how many
-- it has consumed (committed or acked inside a lease) that it replays, and whether a live lease
-- ends. Offsets whose message is gone count for neither.
-- A page: the first p_limit partitions by name after p_after (the last name of the page before),
-- so its cost follows the page, not the queue (the whole of a 100,000-partition queue took 17-20 s);
-- a seed is computed only for a partition that has no cursor. The branches not taken (one
-- partition, or a page) stop at their one-time filter.
-- No row when the queue or the partition is unknown, or past the last page.
create or replace function queen.seek_preview(p_group text, p_queue text, p_partition text, p_to_end boolean, p_timestamp timestamptz,
                                              p_after text default null, p_limit integer default 1000)
returns table (partition_id uuid, partition text, committed bigint, target bigint, skipped bigint, replayed bigint, ends_lease boolean)
-- index walks only, whatever the statistics say: on stale ones (a queue grown since its last
-- analyze) the planner read every partition of the queue and sorted them for a page of 1,000
language sql stable set plan_cache_mode = force_custom_plan set jit = off
set enable_seqscan = off set enable_bitmapscan = off set enable_sort = off as $$
  with q as (select q.id from queen.queues q where q.name = p_queue),
  start as (
    select s.start_at from q join queen.subscriptions s on s.queue_id = q.id
    where s.consumer_group = p_group and p_group <> '__QUEUE_MODE__' and s.start_at is not null),
  page as (
    select p.id, p.name from q join queen.partitions p on p.queue_id = q.id and p.name = p_partition
    where p_partition is not null
    union all
    select x.id, x.name from q cross join lateral (
      select p.id, p.name from queen.partitions p
      where p_partition is null and p.queue_id = q.id and p.name >= coalesce(p_after, '') and p.name is distinct from p_after
      order by p.name limit p_limit) x
  )
  select p.id, p.name, x.committed, t.target,
         queen.stored_between(p.id, x.committed, t.target)
           - (select count(*) from unnest(c.acked_offsets) a
              where a <= t.target and exists (select 1 from queen.messages m where m.partition_id = p.id and m."offset" = a)),
         queen.stored_between(p.id, t.target, x.committed)
           + (select count(*) from unnest(c.acked_offsets) a
              where a > t.target and exists (select 1 from queen.messages m where m.partition_id = p.id and m."offset" = a)),
         coalesce(c.lease_id is not null and c.lease_expires_at > now(), false)
  from page p
  -- one probe per partition of the page (a lateral LIMIT 1: no plan hashes the group's every cursor)
  left join lateral (select c.committed_offset, c.acked_offsets, c.lease_id, c.lease_expires_at from queen.cursors c
                     where c.partition_id = p.id and c.consumer_group = p_group limit 1) c on true
  cross join lateral (
    select coalesce(c.committed_offset,
                    case when not exists (select 1 from start) then queen.low_water(p.id)
                         else queen.position_at(p.id, false, (select st.start_at from start st)) end) as committed) x
  cross join lateral (select queen.position_at(p.id, p_to_end, p_timestamp) as target) t
$$;
