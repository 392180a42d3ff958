-- Operator controls and queue configuration on top of the backlog and counters of 007: the same
-- contracts as 003 and 006. Each of them makes its group a group of the queue first.

create or replace function queen.set_pause(p_partition uuid, p_group text, p_paused boolean, p_reason text,
                                           p_until timestamptz, p_actor text)
returns boolean
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
begin
  select p.queue_id into v_queue from queen.partitions p where p.id = p_partition;
  if not found then
    return false;
  end if;
  perform queen.join_group(v_queue, p_group);
  update queen.cursors set
    paused = p_paused,
    paused_reason = case when p_paused then p_reason end,
    paused_by = case when p_paused then p_actor end,
    paused_at = case when p_paused then now() end,
    paused_until = case when p_paused then p_until end
  where partition_id = p_partition and consumer_group = p_group;
  update queen.backlog b set blocked_until = queen.cursor_block(c)
  from queen.cursors c
  where c.partition_id = p_partition and c.consumer_group = p_group
    and b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  perform queen.audit(p_actor, case when p_paused then 'cursor.pause' else 'cursor.resume' end, 'cursor',
    p_partition::text || '/' || p_group, p_reason, 'ok', jsonb_build_object('until', queen.iso(p_until)));
  perform queen.emit(jsonb_build_object('type', case when p_paused then 'pause' else 'resume' end,
      'queue', q.name, 'partition', p.name, 'partitionId', p.id, 'group', p_group, 'reason', p_reason,
      'until', queen.iso(p_until), 'actor', p_actor))
  from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = p_partition;
  if not p_paused then
    perform queen.notify_claimable(v_queue);
  end if;
  return true;
end
$$;

-- Moves the cursors of (queue, group) that still stand where a join seeded them (never claimed,
-- seeked or acked) to the seeds of the group's current subscription.
create function queen.reseed(p_queue uuid, p_group text) returns void
language plpgsql as $$
begin
  perform 1 from queen.queues q where q.id = p_queue for update;
  -- every cursor of the group, not only the seeded ones: the rebuild below reads them all, and an
  -- ack in progress on one must be done first
  perform 1 from queen.cursors c where c.queue_id = p_queue and c.consumer_group = p_group
  order by c.partition_id for update;
  update queen.cursors c set committed_offset = s.seed, acked_offsets = '{}'
  from queen.seeds(p_queue, p_group) s
  where c.partition_id = s.partition_id and c.consumer_group = p_group and c.seeded and c.lease_id is null
    and c.committed_offset <> s.seed;
  perform queen.rebuild_group(p_queue, p_group);
end
$$;

-- Creates or moves the durable subscription of (queue, group). Mode 'new' starts now, 'all'
-- at the oldest message; p_from, when given, is the start time either way.
create or replace function queen.set_subscription(p_queue text, p_group text, p_mode text, p_from timestamptz, p_actor text)
returns table (queue_name text, consumer_group text, mode text, start_at text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue uuid;
  v_start timestamptz := case when p_from is not null then p_from when p_mode = 'new' then now() end;
  v_mode text := case when p_from is not null then 'from' else p_mode end;
  v_joined boolean;
begin
  perform queen.ensure_queues(array[p_queue]);
  select id into v_queue from queen.queues where name = p_queue;
  v_joined := exists (select 1 from queen.queue_groups g where g.queue_id = v_queue and g.consumer_group = p_group);
  insert into queen.subscriptions as s (queue_id, consumer_group, mode, start_at)
  values (v_queue, p_group, v_mode, v_start)
  on conflict (queue_id, consumer_group) do update set mode = excluded.mode, start_at = excluded.start_at, updated_at = now();
  if v_joined then
    perform queen.reseed(v_queue, p_group);
  else
    perform queen.join_group(v_queue, p_group);
  end if;
  perform queen.audit(p_actor, 'subscription.set', 'subscription', p_queue || '/' || p_group, null, 'ok',
    jsonb_build_object('mode', v_mode, 'startAt', queen.iso(v_start)));
  return query select p_queue, p_group, v_mode, queen.iso(v_start);
end
$$;

-- Older clients move every subscription record of a group to one time.
create or replace function queen.move_subscriptions(p_group text, p_from timestamptz, p_actor text) returns integer
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_count integer;
begin
  update queen.subscriptions set mode = 'from', start_at = p_from, updated_at = now() where consumer_group = p_group;
  get diagnostics v_count = row_count;
  perform queen.reseed(s.queue_id, p_group)
  from (select s.queue_id from queen.subscriptions s
        join queen.queue_groups g on g.queue_id = s.queue_id and g.consumer_group = s.consumer_group
        where s.consumer_group = p_group order by s.queue_id) s;
  perform queen.audit(p_actor, 'subscription.move', 'consumer_group', p_group, null, 'ok',
    jsonb_build_object('startAt', queen.iso(p_from), 'records', v_count));
  return v_count;
end
$$;

-- Moves every cursor of (group, queue) to the end, or to just before the first segment created
-- at or after p_timestamp; any live lease ends (its later acks are refused).
create or replace function queen.seek(p_group text, p_queue text, p_to_end boolean, p_timestamp timestamptz, p_reason text, p_actor text)
returns integer
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_count integer;
begin
  select id into v_queue from queen.queues where name = p_queue;
  if v_queue is null then
    return null;
  end if;
  perform queen.join_group(v_queue, p_group);
  perform 1 from queen.queues q where q.id = v_queue for update;
  perform 1 from queen.cursors c where c.queue_id = v_queue and c.consumer_group = p_group
  order by c.partition_id for update;
  update queen.cursors c set
    committed_offset = t.target,
    acked_offsets = '{}',
    seeded = false,
    lease_id = null, lease_end_offset = null, lease_acquired_at = null, lease_expires_at = null,
    lease_seconds = null, lease_holder = null, lease_extensions = 0, retry_not_before = null
  from (
    select p.id,
           case when p_to_end then p.head_offset
                else coalesce((select s.first_offset - 1 from queen.segments s
                               where s.partition_id = p.id and s.created_at >= p_timestamp
                               order by s.created_at, s.first_offset limit 1), p.head_offset)
           end as target
    from queen.partitions p where p.queue_id = v_queue
  ) t
  where c.partition_id = t.id and c.consumer_group = p_group;
  get diagnostics v_count = row_count;
  -- A seek back is a replay: the replayed messages' attempt counts start over (their dead-letter
  -- rows stay, as history, and are renewed if they die again).
  delete from queen.message_attempts a
  using queen.cursors c
  where c.queue_id = v_queue and c.consumer_group = p_group
    and a.partition_id = c.partition_id and a.consumer_group = p_group and a."offset" > c.committed_offset;
  perform queen.rebuild_group(v_queue, p_group);
  perform queen.audit(p_actor, 'cursor.seek', 'consumer_group', p_group || '@' || p_queue, p_reason, 'ok',
    jsonb_build_object('toEnd', p_to_end, 'timestamp', queen.iso(p_timestamp), 'partitions', v_count));
  perform queen.emit(jsonb_build_object('type', 'seek', 'queue', p_queue, 'group', p_group, 'toEnd', p_to_end,
    'timestamp', queen.iso(p_timestamp), 'actor', p_actor));
  perform queen.notify_claimable(v_queue);
  return v_count;
end
$$;

-- Drops the group from a queue (or from all its queues): its cursors with their attempt counts
-- and dead letters, its backlog rows and counters, and with p_delete_metadata its subscription
-- records. Each queue row is locked (in id order) so that no push creates a cursor meanwhile.
create or replace function queen.delete_consumer_group(p_group text, p_queue text, p_delete_metadata boolean, p_reason text, p_actor text)
returns integer
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queues uuid[];
  v_count integer;
begin
  v_queues := array(
    select q.id from queen.queues q
    where (p_queue is null or q.name = p_queue)
      and exists (select 1 from queen.queue_groups g where g.queue_id = q.id and g.consumer_group = p_group)
    order by q.id
    for update);
  delete from queen.message_attempts a using queen.cursors c
  where c.queue_id = any (v_queues) and c.consumer_group = p_group
    and a.partition_id = c.partition_id and a.consumer_group = p_group;
  delete from queen.dead_letters d using queen.cursors c
  where c.queue_id = any (v_queues) and c.consumer_group = p_group
    and d.partition_id = c.partition_id and d.consumer_group = p_group;
  delete from queen.cursors c where c.queue_id = any (v_queues) and c.consumer_group = p_group;
  get diagnostics v_count = row_count;
  delete from queen.backlog b
  where (b.queue_id::text || '/' || b.consumer_group) in (select q::text || '/' || p_group from unnest(v_queues) q);
  delete from queen.group_stats s where s.queue_id = any (v_queues) and s.consumer_group = p_group;
  delete from queen.queue_groups g where g.queue_id = any (v_queues) and g.consumer_group = p_group;
  if p_delete_metadata then
    delete from queen.subscriptions s using queen.queues q
    where s.queue_id = q.id and s.consumer_group = p_group and (p_queue is null or q.name = p_queue);
    -- deleted everywhere: queues created later no longer adopt it
    delete from queen.scope_subscriptions s where p_queue is null and s.consumer_group = p_group;
  end if;
  perform queen.audit(p_actor, 'consumer_group.delete', 'consumer_group', coalesce(p_group || '@' || p_queue, p_group),
    p_reason, 'ok', jsonb_build_object('deletedPartitions', v_count, 'metadataDeleted', p_delete_metadata));
  return v_count;
end
$$;

-- A full set (003). A new Default partition gets its cursors and is counted.
create or replace function queen.configure_queue(p_name text, p_namespace text, p_task text, p_options jsonb)
returns table (queue_id uuid, partition_id uuid, options jsonb)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue queen.queues;
  v_partition uuid;
  v_created boolean;
begin
  insert into queen.queues as q (
    id, name, namespace, task, lease_time, retry_limit, retry_delay, delayed_processing,
    window_buffer, min_pop_wait_time, max_size, ttl, priority, dead_letter_queue,
    dlq_after_max_retries, retention_enabled, retention_seconds, completed_retention_seconds,
    encryption_enabled, max_wait_time_seconds, configured)
  values (
    queen.uuidv7(), p_name, p_namespace, p_task,
    (p_options->>'leaseTime')::integer, (p_options->>'retryLimit')::integer,
    (p_options->>'retryDelay')::integer, (p_options->>'delayedProcessing')::integer,
    (p_options->>'windowBuffer')::integer, (p_options->>'minPopWaitTime')::integer,
    (p_options->>'maxSize')::integer, (p_options->>'ttl')::integer,
    (p_options->>'priority')::integer, (p_options->>'deadLetterQueue')::boolean,
    (p_options->>'dlqAfterMaxRetries')::boolean, (p_options->>'retentionEnabled')::boolean,
    (p_options->>'retentionSeconds')::integer, (p_options->>'completedRetentionSeconds')::integer,
    (p_options->>'encryptionEnabled')::boolean, (p_options->>'maxWaitTimeSeconds')::integer, true)
  on conflict (name) do update set
    namespace = excluded.namespace, task = excluded.task,
    lease_time = excluded.lease_time, retry_limit = excluded.retry_limit,
    retry_delay = excluded.retry_delay, delayed_processing = excluded.delayed_processing,
    window_buffer = excluded.window_buffer, min_pop_wait_time = excluded.min_pop_wait_time,
    max_size = excluded.max_size, ttl = excluded.ttl, priority = excluded.priority,
    dead_letter_queue = excluded.dead_letter_queue,
    dlq_after_max_retries = excluded.dlq_after_max_retries,
    retention_enabled = excluded.retention_enabled, retention_seconds = excluded.retention_seconds,
    completed_retention_seconds = excluded.completed_retention_seconds,
    encryption_enabled = excluded.encryption_enabled,
    max_wait_time_seconds = excluded.max_wait_time_seconds,
    configured = true, updated_at = now()
  returning * into v_queue;
  v_created := v_queue.created_at = now(); -- inserted by this statement, not updated

  insert into queen.partitions (id, queue_id, name)
  values (queen.uuidv7(), v_queue.id, 'Default')
  on conflict (queue_id, name) do nothing
  returning id into v_partition;
  if v_partition is not null then
    insert into queen.cursors (partition_id, consumer_group, queue_id, seeded)
    select v_partition, g.consumer_group, v_queue.id, true from queen.queue_groups g where g.queue_id = v_queue.id;
    insert into queen.queue_stats as t (queue_id, shard, partitions) values (v_queue.id, queen.stats_shard(), 1)
    on conflict (queue_id, shard) do update set partitions = t.partitions + 1;
  else
    select p.id into v_partition from queen.partitions p where p.queue_id = v_queue.id and p.name = 'Default';
  end if;

  if v_created then
    perform queen.adopt_scope_subscriptions(v_queue.id);
  else
    -- the lifecycle options may have changed: the job looks at every partition again (012)
    update queen.partitions p set retain_check_at = now() where p.queue_id = v_queue.id and p.retain_check_at > now();
  end if;
  perform pg_notify('queen_config', v_queue.name);
  return query select v_queue.id, v_partition, queen.queue_options(v_queue);
end
$$;

-- Removes the queue and everything of it (003), cursors and backlog rows included.
create or replace function queen.delete_queue(p_name text) returns boolean
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
begin
  select id into v_queue from queen.queues where name = p_name for update;
  if not found then
    return false;
  end if;
  delete from queen.messages where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.segments where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.backlog b
  where (b.queue_id::text || '/' || b.consumer_group) in
        (select g.queue_id::text || '/' || g.consumer_group from queen.queue_groups g where g.queue_id = v_queue);
  delete from queen.cursors where queue_id = v_queue;
  delete from queen.queue_stats where queue_id = v_queue;
  delete from queen.group_stats where queue_id = v_queue;
  delete from queen.queues where id = v_queue;
  return true;
end
$$;
