-- Ends every (partition, group) row of a lease now, as a force release: answers the rows it freed
-- ({partitionId, group, queue, partition, queueId, expired, from, to, holder}), or null when the
-- lease is gone. Writes no audit row: queen.release_lease and queen.release_leases do, one per
-- operator action.
create or replace function queen.end_lease(p_lease_id uuid, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_released jsonb;
begin
  with locked as (
    select c.partition_id, c.consumer_group, c.queue_id, c.lease_expires_at <= now() as expired,
           c.committed_offset + 1 as span_from, c.lease_end_offset as span_to, c.lease_holder
    from queen.cursors c
    where c.lease_id = p_lease_id
    order by c.partition_id, c.consumer_group
    for update
  ),
  released as (
    update queen.cursors c set lease_id = null, lease_end_offset = null, lease_acquired_at = null,
      lease_expires_at = null, lease_seconds = null, lease_holder = null, lease_extensions = 0,
      -- an expired lease nobody reclaimed yet is counted as an expiry, as a reclaim would count it
      lease_expiries = c.lease_expiries + case when l.expired then 1 else 0 end
    from locked l where c.partition_id = l.partition_id and c.consumer_group = l.consumer_group
    returning c.partition_id, c.consumer_group, l.expired, l.span_from, l.span_to, l.lease_holder
  )
  select jsonb_agg(jsonb_build_object('partitionId', r.partition_id, 'group', r.consumer_group, 'queue', q.name,
                                      'partition', p.name, 'queueId', q.id, 'expired', r.expired,
                                      'from', r.span_from, 'to', r.span_to, 'holder', r.lease_holder)
                   order by q.name, p.name)
  into v_released
  from released r join queen.partitions p on p.id = r.partition_id join queen.queues q on q.id = p.queue_id;
  if v_released is null then
    return null;
  end if;
  update queen.backlog b set blocked_until = queen.cursor_block(c)
  from jsonb_array_elements(v_released) r
  join queen.cursors c on c.partition_id = (r->>'partitionId')::uuid and c.consumer_group = r->>'group'
  where b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', r->'queueId', 'group', r->'group', 'leaseExpiries', 1)))
  from jsonb_array_elements(v_released) r
  where (r->>'expired')::boolean;
  perform queen.emit(jsonb_build_object('type', 'release', 'leaseId', p_lease_id, 'reason', p_reason,
    'actor', p_actor, 'partitions', v_released));
  perform queen.notify_claimable(q) from (select distinct (r->>'queueId')::uuid as q from jsonb_array_elements(v_released) r) x;
  return v_released;
end
$$;

-- What an audit row of released leases says of them (sql/017's vocabulary): the queues, the group
-- and holder when there is one, and every partition with its span.
create or replace function queen.released_details(p_released jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'queues', (select jsonb_agg(distinct r->'queue') from jsonb_array_elements(p_released) r),
    'group', case when (select count(distinct r->'group') from jsonb_array_elements(p_released) r) = 1 then p_released->0->'group' end,
    'holder', case when (select count(distinct r->'holder') from jsonb_array_elements(p_released) r) = 1 then p_released->0->'holder' end,
    'partitions', (select jsonb_agg(jsonb_build_object('queue', r->'queue', 'partition', r->'partition',
                                      'partitionId', r->'partitionId', 'group', r->'group', 'from', r->'from',
                                      'to', r->'to', 'holder', r->'holder', 'expired', r->'expired')
                         || case when r ? 'leaseId' then jsonb_build_object('leaseId', r->'leaseId') else '{}' end)
                   from (select r from jsonb_array_elements(p_released) r limit queen.audit_partitions_limit()) x(r)),
    'partitionCount', jsonb_array_length(p_released))
$$;

-- One force release, audited (lease.release, target the lease id). A release of no lease is refused
-- (no rows: 404) and writes nothing, not even an audit row.
create or replace function queen.release_lease(p_lease_id uuid, p_reason text, p_actor text)
returns table (partition_id uuid, consumer_group text, queue_name text, partition_name text,
               span_from bigint, span_to bigint, holder text, expired boolean)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_released jsonb := queen.end_lease(p_lease_id, p_reason, p_actor);
begin
  if v_released is null then
    return;
  end if;
  perform queen.audit(p_actor, 'lease.release', 'lease', p_lease_id::text, p_reason, 'released',
    jsonb_build_object('leaseId', p_lease_id) || queen.released_details(v_released));

  return query
  select (r->>'partitionId')::uuid, r->>'group', r->>'queue', r->>'partition', (r->>'from')::bigint, (r->>'to')::bigint,
         r->>'holder', (r->>'expired')::boolean
  from jsonb_array_elements(v_released) r;
end
$$;

-- The leases named, each ended as one force release, in one transaction (in id order, so two bulk
-- releases lock alike), and one audit row for the operator's action (issue 34): target "N leases",
-- the lease ids and every partition freed in its details. Answers per id what it freed (null: the
-- lease had ended meanwhile, nothing written for it).
create or replace function queen.release_leases(p_lease_ids uuid[], p_reason text, p_actor text)
returns table (lease_id uuid, released jsonb)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_id uuid;
  v_one jsonb;
  v_all jsonb := '[]';
  v_ids uuid[] := '{}';
begin
  for v_id in select distinct x from unnest(p_lease_ids) x order by x loop
    v_one := queen.end_lease(v_id, p_reason, p_actor);
    if v_one is not null then
      v_ids := v_ids || v_id;
      v_all := v_all || (select jsonb_agg(r || jsonb_build_object('leaseId', v_id)) from jsonb_array_elements(v_one) r);
    end if;
    lease_id := v_id;
    released := v_one;
    return next;
  end loop;
  if cardinality(v_ids) > 0 then
    perform queen.audit(p_actor, 'lease.release', 'leases',
      case when cardinality(v_ids) = 1 then v_ids[1]::text else cardinality(v_ids) || ' leases' end, p_reason, 'released',
      jsonb_build_object('leaseIds', to_jsonb(v_ids), 'leases', cardinality(v_ids)) || queen.released_details(v_all));
  end if;
end
$$;

-- As sql/009, with the queue, partition and group in the audit details.
create or replace function queen.set_pause(p_partition uuid, p_group text, p_paused boolean, p_reason text,
                                           p_until timestamptz, p_actor text)
returns boolean
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_queue_name text;
  v_partition_name text;
begin
  select p.queue_id, q.name, p.name into v_queue, v_queue_name, v_partition_name
  from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = p_partition;
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
    p_partition::text || '/' || p_group, p_reason, 'ok',
    jsonb_build_object('until', queen.iso(p_until), 'queue', v_queue_name, 'group', p_group,
      'partitions', jsonb_build_array(jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name,
                                                         'partitionId', p_partition, 'group', p_group))));
  perform queen.emit(jsonb_build_object('type', case when p_paused then 'pause' else 'resume' end,
      'queue', v_queue_name, 'partition', v_partition_name, 'partitionId', p_partition, 'group', p_group, 'reason', p_reason,
      'until', queen.iso(p_until), 'actor', p_actor));
  if not p_paused then
    perform queen.notify_claimable(v_queue);
  end if;
  return true;
end
$$;

-- As sql/006, with the state it replaced in the audit details.
create or replace function queen.set_pop_maintenance(p_enabled boolean, p_reason text, p_actor text) returns boolean
language plpgsql as $$
declare
  v_before jsonb;
begin
  select s.value into v_before from queen.system_state s where s.key = 'pop_maintenance' for update;
  insert into queen.system_state (key, value, updated_at)
  values ('pop_maintenance', jsonb_build_object('enabled', p_enabled, 'reason', p_reason, 'by', p_actor, 'at', queen.iso(now())), now())
  on conflict (key) do update set value = excluded.value, updated_at = now();
  perform queen.audit(p_actor, case when p_enabled then 'maintenance.on' else 'maintenance.off' end, 'system',
    'pop_maintenance', p_reason, 'ok',
    jsonb_build_object('enabled', p_enabled, 'wasEnabled', coalesce((v_before->>'enabled')::boolean, false),
                       'previous', coalesce(v_before, '{}')));
  perform queen.emit(jsonb_build_object('type', 'maintenance', 'enabled', p_enabled, 'reason', p_reason, 'actor', p_actor));
  return p_enabled;
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

-- As sql/009, with the queues the group was deleted from in the audit details.
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
    p_reason, 'ok', jsonb_build_object('deletedPartitions', v_count, 'metadataDeleted', p_delete_metadata, 'group', p_group,
      'queues', (select coalesce(jsonb_agg(q.name order by q.name), '[]') from queen.queues q where q.id = any (v_queues))));
  return v_count;
end
$$;

-- Deletes one message (admin). Every group that had not consumed it passes over it as done, as an
-- ack would: inside a live lease it counts as acked for that lease (the lease ends when that
-- completes its span), elsewhere the cursor passes it when it gets there (queen.passed); for those
-- groups it is evicted. A group that joins later never sees it (its span skips what is gone).
-- Answers null when the message is unknown; otherwise what it did, which is also audited.
create or replace function queen.delete_message(p_partition uuid, p_transaction_id text, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_queue_name text;
  v_partition_name text;
  v_offset bigint;
  v_bytes integer;
  v_groups jsonb;
  v_details jsonb;
begin
  -- the partition, then its cursors in group order, as the lifecycle job takes them
  select p.queue_id, p.name, q.name into v_queue, v_partition_name, v_queue_name
  from queen.partitions p join queen.queues q on q.id = p.queue_id
  where p.id = p_partition for no key update of p;
  if not found then
    return null;
  end if;
  perform 1 from queen.cursors c where c.partition_id = p_partition order by c.consumer_group for update;

  delete from queen.messages m where m.partition_id = p_partition and m.transaction_id = p_transaction_id
  returning m."offset", pg_column_size(m.payload) into v_offset, v_bytes;
  if not found then
    return null;
  end if;
  delete from queen.message_attempts a where a.partition_id = p_partition and a."offset" = v_offset;
  -- its dead letters stay, with a copy of the message (queen.keep_what_outlives_messages)

  with pending as (
    select c.consumer_group, c.committed_offset as old_committed, adv.committed, adv.done,
           c.lease_id is not null and c.lease_expires_at > now() and v_offset <= c.lease_end_offset as leased,
           c.lease_end_offset is not null and c.lease_end_offset <= adv.committed as released
    from queen.cursors c
    cross join lateral queen.passed(p_partition, c.committed_offset, c.acked_offsets) adv
    where c.partition_id = p_partition and c.committed_offset < v_offset and not (v_offset = any (c.acked_offsets))
  ),
  moved as (
    update queen.cursors c set
      committed_offset = n.committed,
      acked_offsets = n.done,
      evicted = c.evicted + 1
    from pending n
    where c.partition_id = p_partition and c.consumer_group = n.consumer_group
    returning c.consumer_group, n.committed - n.old_committed as committed, n.leased, n.released
  )
  select jsonb_agg(to_jsonb(moved) order by consumer_group) into v_groups from moved;

  if v_groups is not null then
    -- a lease whose whole span is now done ends, as the ack that completes it would end it
    update queen.cursors c set lease_id = null, lease_end_offset = null, lease_acquired_at = null, lease_expires_at = null,
                               lease_seconds = null, lease_holder = null, lease_extensions = 0
    where c.partition_id = p_partition and c.lease_end_offset <= c.committed_offset;
    perform queen.follow_cursors(p_partition);
    perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', v_queue, 'group', g->>'consumer_group',
              'committed', (g->>'committed')::bigint, 'evicted', 1)))
    from jsonb_array_elements(v_groups) g;
  end if;
  insert into queen.queue_stats as t (queue_id, shard, deleted, bytes)
  values (v_queue, queen.stats_shard(), 1, -v_bytes)
  on conflict (queue_id, shard) do update set deleted = t.deleted + excluded.deleted, bytes = t.bytes + excluded.bytes;

  -- the partition's row of every group reading it, in the audit vocabulary (017): a deleted
  -- message is gone for each of them
  v_details := jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name, 'partitionId', p_partition,
    'offset', v_offset, 'groups', coalesce(v_groups, '[]'),
    'partitions', (select coalesce(jsonb_agg(jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name,
                                                                 'partitionId', p_partition, 'group', c.consumer_group)
                                             order by c.consumer_group), '[]')
                   from queen.cursors c where c.partition_id = p_partition));
  perform queen.audit(p_actor, 'message.delete', 'message', p_partition || '/' || p_transaction_id, p_reason, 'ok', v_details);
  if exists (select 1 from jsonb_array_elements(v_groups) g where (g->>'released')::boolean) then
    perform queen.notify_claimable(v_queue);
  end if;
  return v_details;
end
$$;
