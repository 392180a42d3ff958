-- Issue 8: a force release answers (and audits) every partition and span it frees; every operator
-- action records the objects it touched in its audit row's details, so the audit page can link
-- back to them and be filtered by queue, partition and group; an empty pop can say it met a pause.
--
-- Audit details use one vocabulary: `queue` (one queue) or `queues` (several), `group`, and
-- `partitions`: [{queue, partition, partitionId, ...}] (a release adds `from`/`to`/`holder`, a
-- seek `from`/`to`). The audit filters match these keys with `@>` through the index below.

create index audit_log_details on queen.audit_log using gin (details jsonb_path_ops);

-- The return table gains the span and the holder, so the function is dropped and recreated; every
-- other behaviour is that of sql/008.
drop function queen.release_lease(uuid, text, text);
create function queen.release_lease(p_lease_id uuid, p_reason text, p_actor text)
returns table (partition_id uuid, consumer_group text, queue_name text, partition_name text,
               span_from bigint, span_to bigint, holder text, expired boolean)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
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

  -- a release of no lease is refused (404) and writes nothing, not even an audit row
  if v_released is null then
    return;
  end if;
  perform queen.audit(p_actor, 'lease.release', 'lease', p_lease_id::text, p_reason, 'released',
    jsonb_build_object(
      'leaseId', p_lease_id,
      'queues', (select jsonb_agg(distinct r->'queue') from jsonb_array_elements(v_released) r),
      'group', v_released->0->'group',
      'holder', v_released->0->'holder',
      'partitions', (select jsonb_agg(jsonb_build_object('queue', r->'queue', 'partition', r->'partition',
                                        'partitionId', r->'partitionId', 'group', r->'group', 'from', r->'from',
                                        'to', r->'to', 'holder', r->'holder', 'expired', r->'expired'))
                     from jsonb_array_elements(v_released) r)));
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

  return query
  select (r->>'partitionId')::uuid, r->>'group', r->>'queue', r->>'partition', (r->>'from')::bigint, (r->>'to')::bigint,
         r->>'holder', (r->>'expired')::boolean
  from jsonb_array_elements(v_released) r;
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

-- A seek's audit row lists at most this many partitions (moved ones first, then those whose lease
-- it ended; with a count of all moved): a queue may have 100,000 partitions.
create function queen.audit_partitions_limit() returns integer language sql immutable as 'select 1000';

-- What a seek's audit entry for a partition adds when the seek ended its lease.
create function queen.lease_ended(p_lease uuid) returns jsonb language sql immutable as $$
  select case when p_lease is null then '{}'::jsonb else jsonb_build_object('leaseEnded', true, 'leaseId', p_lease) end
$$;

-- As sql/009, with the partitions moved (from/to offsets) in the audit details, and after them
-- those whose lease it ended without moving them (`leaseEnded`), so a partition's audit finds the seek.

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
             case when p_to_end then p.head_offset
                  else coalesce((select s.first_offset - 1 from queen.segments s
                                 where s.partition_id = p.id and s.created_at >= p_timestamp
                                 order by s.created_at, s.first_offset limit 1), p.head_offset)
             end as target
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
create function queen.seek_partition(p_group text, p_queue text, p_partition text, p_to_end boolean, p_timestamp timestamptz,
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
  v_target := case when p_to_end then v_head
                   else coalesce((select s.first_offset - 1 from queen.segments s
                                  where s.partition_id = v_partition and s.created_at >= p_timestamp
                                  order by s.created_at, s.first_offset limit 1), v_head) end;
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

-- Why an empty pop of a group found nothing, when the answer is a pause: the single-partition
-- route's cursor is paused, or (queue route) a paused cursor of the group has
-- messages pending and nothing of the group's backlog on the queue is claimable now (every pending
-- partition is held by a pause, a live lease or a retry delay). Null otherwise ('idle'). Asked only
-- after a pop came back empty; index probes bounded by the paused cursors of the queue.
create function queen.pop_empty_reason(p_queue text, p_partition text, p_group text) returns text
language sql stable set plan_cache_mode = force_custom_plan as $$
  select case when exists (
    select 1
    from queen.queues q
    join queen.cursors c on c.queue_id = q.id and c.paused and c.consumer_group = p_group
    join queen.partitions p on p.id = c.partition_id
    where q.name = p_queue
      and (p_partition is null or p.name = p_partition)
      and (c.paused_until is null or c.paused_until > now())
      and (p_partition is not null or p.head_offset > c.committed_offset)
  ) and (p_partition is not null or not exists (
    select 1
    from queen.queues q
    join queen.backlog b on b.queue_id = q.id and b.consumer_group = p_group
    where q.name = p_queue and (b.blocked_until is null or b.blocked_until <= now())
  )) then 'paused' end
$$;
