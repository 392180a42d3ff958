-- Operator controls: pause, pop maintenance, subscriptions, seek, group deletion. Each is audited.

create function queen.set_pause(p_partition uuid, p_group text, p_paused boolean, p_reason text,
                                p_until timestamptz, p_actor text)
returns boolean
language plpgsql as $$
begin
  if not exists (select 1 from queen.partitions where id = p_partition) then
    return false;
  end if;
  perform queen.ensure_cursor(p_partition, p_group);
  update queen.cursors set
    paused = p_paused,
    paused_reason = case when p_paused then p_reason end,
    paused_by = case when p_paused then p_actor end,
    paused_at = case when p_paused then now() end,
    paused_until = case when p_paused then p_until end
  where partition_id = p_partition and consumer_group = p_group;
  perform queen.audit(p_actor, case when p_paused then 'cursor.pause' else 'cursor.resume' end, 'cursor',
    p_partition::text || '/' || p_group, p_reason, 'ok', jsonb_build_object('until', queen.iso(p_until)));
  perform queen.emit(jsonb_build_object('type', case when p_paused then 'pause' else 'resume' end,
      'queue', q.name, 'partition', p.name, 'partitionId', p.id, 'group', p_group, 'reason', p_reason,
      'until', queen.iso(p_until), 'actor', p_actor))
  from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = p_partition;
  if not p_paused then
    perform queen.notify_claimable(p.queue_id) from queen.partitions p where p.id = p_partition;
  end if;
  return true;
end
$$;

create function queen.set_pop_maintenance(p_enabled boolean, p_reason text, p_actor text) returns boolean
language plpgsql as $$
begin
  insert into queen.system_state (key, value, updated_at)
  values ('pop_maintenance', jsonb_build_object('enabled', p_enabled, 'reason', p_reason, 'by', p_actor, 'at', queen.iso(now())), now())
  on conflict (key) do update set value = excluded.value, updated_at = now();
  perform queen.audit(p_actor, case when p_enabled then 'maintenance.on' else 'maintenance.off' end, 'system',
    'pop_maintenance', p_reason, 'ok');
  perform queen.emit(jsonb_build_object('type', 'maintenance', 'enabled', p_enabled, 'reason', p_reason, 'actor', p_actor));
  return p_enabled;
end
$$;

-- Creates or moves the durable subscription of (queue, group). Mode 'new' starts now, 'all'
-- at the oldest message; p_from, when given, is the start time either way.
create function queen.set_subscription(p_queue text, p_group text, p_mode text, p_from timestamptz, p_actor text)
returns table (queue_name text, consumer_group text, mode text, start_at text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_queue uuid;
  v_start timestamptz := case when p_from is not null then p_from when p_mode = 'new' then now() end;
  v_mode text := case when p_from is not null then 'from' else p_mode end;
begin
  perform queen.ensure_queues(array[p_queue]);
  select id into v_queue from queen.queues where name = p_queue;
  insert into queen.subscriptions as s (queue_id, consumer_group, mode, start_at)
  values (v_queue, p_group, v_mode, v_start)
  on conflict (queue_id, consumer_group) do update set mode = excluded.mode, start_at = excluded.start_at, updated_at = now();
  perform queen.audit(p_actor, 'subscription.set', 'subscription', p_queue || '/' || p_group, null, 'ok',
    jsonb_build_object('mode', v_mode, 'startAt', queen.iso(v_start)));
  return query select p_queue, p_group, v_mode, queen.iso(v_start);
end
$$;

-- Older clients move every subscription record of a group to one time.
create function queen.move_subscriptions(p_group text, p_from timestamptz, p_actor text) returns integer
language plpgsql as $$
declare
  v_count integer;
begin
  update queen.subscriptions set mode = 'from', start_at = p_from, updated_at = now() where consumer_group = p_group;
  get diagnostics v_count = row_count;
  perform queen.audit(p_actor, 'subscription.move', 'consumer_group', p_group, null, 'ok',
    jsonb_build_object('startAt', queen.iso(p_from), 'records', v_count));
  return v_count;
end
$$;

-- Moves every cursor of (group, queue) to the end, or to just before the first segment created
-- at or after p_timestamp; any live lease ends (its later acks are refused).
create function queen.seek(p_group text, p_queue text, p_to_end boolean, p_timestamp timestamptz, p_reason text, p_actor text)
returns integer
language plpgsql as $$
declare
  v_queue uuid;
  v_count integer;
begin
  select id into v_queue from queen.queues where name = p_queue;
  if v_queue is null then
    return null;
  end if;
  perform queen.ensure_cursor(p.id, p_group) from queen.partitions p where p.queue_id = v_queue;
  perform 1 from queen.cursors c join queen.partitions p on p.id = c.partition_id
  where p.queue_id = v_queue and c.consumer_group = p_group
  order by c.partition_id for update of c;
  update queen.cursors c set
    committed_offset = t.target,
    acked_offsets = '{}',
    lease_id = null, lease_end_offset = null, lease_acquired_at = null, lease_expires_at = null,
    lease_holder = null, lease_extensions = 0, retry_not_before = null
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
  perform queen.audit(p_actor, 'cursor.seek', 'consumer_group', p_group || '@' || p_queue, p_reason, 'ok',
    jsonb_build_object('toEnd', p_to_end, 'timestamp', queen.iso(p_timestamp), 'partitions', v_count));
  perform queen.emit(jsonb_build_object('type', 'seek', 'queue', p_queue, 'group', p_group, 'toEnd', p_to_end,
    'timestamp', queen.iso(p_timestamp), 'actor', p_actor));
  perform queen.notify_claimable(v_queue);
  return v_count;
end
$$;

-- Drops the cursors of a group (on one queue, or all), and with p_delete_metadata its
-- subscription records; the group's attempts and dead letters go with its cursors.
create function queen.delete_consumer_group(p_group text, p_queue text, p_delete_metadata boolean, p_reason text, p_actor text)
returns integer
language plpgsql as $$
declare
  v_count integer;
begin
  with targets as (
    select c.partition_id from queen.cursors c join queen.partitions p on p.id = c.partition_id
    join queen.queues q on q.id = p.queue_id
    where c.consumer_group = p_group and (p_queue is null or q.name = p_queue)
    order by c.partition_id for update of c
  ),
  gone_attempts as (
    delete from queen.message_attempts a using targets t where a.partition_id = t.partition_id and a.consumer_group = p_group
  ),
  gone_dead as (
    delete from queen.dead_letters d using targets t where d.partition_id = t.partition_id and d.consumer_group = p_group
  )
  delete from queen.cursors c using targets t where c.partition_id = t.partition_id and c.consumer_group = p_group;
  get diagnostics v_count = row_count;
  if p_delete_metadata then
    delete from queen.subscriptions s using queen.queues q
    where s.queue_id = q.id and s.consumer_group = p_group and (p_queue is null or q.name = p_queue);
  end if;
  perform queen.audit(p_actor, 'consumer_group.delete', 'consumer_group', coalesce(p_group || '@' || p_queue, p_group),
    p_reason, 'ok', jsonb_build_object('deletedPartitions', v_count, 'metadataDeleted', p_delete_metadata));
  return v_count;
end
$$;
