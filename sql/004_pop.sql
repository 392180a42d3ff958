-- The pop: claim a leased batch (pop-routes.md), with the seeding of new cursors and the
-- redelivery bookkeeping of DESIGN.md §4.

create index segments_created on queen.segments (partition_id, created_at);

-- Where a (partition, group) that was never contacted starts: queue mode and groups without a
-- durable subscription at the oldest message; otherwise just before the first segment created at
-- or after the subscription's start time.
create function queen.seed_offset(p_partition uuid, p_queue uuid, p_group text) returns bigint
language plpgsql stable as $$
declare
  v_start timestamptz;
  v_offset bigint;
begin
  if p_group = '__QUEUE_MODE__' then
    return 0;
  end if;
  select s.start_at into v_start from queen.subscriptions s where s.queue_id = p_queue and s.consumer_group = p_group;
  if v_start is null then
    return 0;
  end if;
  select s.first_offset - 1 into v_offset
  from queen.segments s
  where s.partition_id = p_partition and s.created_at >= v_start
  order by s.created_at, s.first_offset
  limit 1;
  if found then
    return v_offset;
  end if;
  return (select p.head_offset from queen.partitions p where p.id = p_partition);
end
$$;

-- Creates the cursor of a (partition, group) where it does not exist yet, at its seed offset.
-- Nothing below the seed was delivered: skipped is not delivered.
create function queen.ensure_cursor(p_partition uuid, p_group text) returns void
language sql as $$
  insert into queen.cursors (partition_id, consumer_group, committed_offset)
  select p.id, p_group, queen.seed_offset(p.id, p.queue_id, p_group)
  from queen.partitions p
  where p.id = p_partition
  on conflict do nothing
$$;

-- Moves `committed` over the contiguous run of done offsets just above it: in a run starting at
-- committed + 1, offset minus its rank is always `committed`.
create function queen.advance(p_committed bigint, p_done bigint[], out committed bigint, out done bigint[])
language sql immutable as $$
  with d as (select distinct x from unnest(p_done) x where x > p_committed),
  run as (
    select coalesce(max(x), p_committed) as c
    from (select x, x - row_number() over (order by x) as g from d) y
    where g = p_committed)
  select run.c, array(select x from d where x > run.c order by x) from run
$$;

create function queen.pop_maintenance() returns boolean
language sql stable as $$
  select coalesce((select (value->>'enabled')::boolean from queen.system_state where key = 'pop_maintenance'), false)
$$;

-- Partitions of the given queues where this group may claim now: something above its cursor, no
-- live lease, no retry delay running, not paused, outside the window buffer. Higher queue
-- priority first, then the partition this group served least recently (fairness).
create function queen.pop_candidates(p_queue_ids uuid[], p_partition text, p_group text)
returns table (pid uuid, pname text, qid uuid, qname text, lease_time integer, delayed_processing integer,
               has_cursor boolean, available bigint)
language sql stable as $$
  select p.id, p.name, q.id, q.name, q.lease_time, q.delayed_processing, c.partition_id is not null,
         p.head_offset - coalesce(c.committed_offset, 0)
  from queen.partitions p
  join queen.queues q on q.id = p.queue_id
  left join queen.cursors c on c.partition_id = p.id and c.consumer_group = p_group
  where p.queue_id = any (p_queue_ids)
    and (p_partition is null or p.name = p_partition)
    and p.head_offset > coalesce(c.committed_offset, 0)
    and (c.lease_expires_at is null or c.lease_expires_at <= now())
    and (c.retry_not_before is null or c.retry_not_before <= now())
    and not (coalesce(c.paused, false) and (c.paused_until is null or c.paused_until > now()))
    and (q.window_buffer = 0 or p.last_push_at <= now() - make_interval(secs => q.window_buffer))
  order by q.priority desc, c.last_claim_at nulls first, p.id
$$;

-- Claims up to p_batch messages in total, partition by partition, from at most p_max_partitions
-- partitions (<= 0: no cap). Scope: one queue (p_queue), one partition of it (p_partition), or
-- every queue of a namespace/task (p_queue null). Other workers' leased partitions are skipped,
-- never waited for. Raises SQLSTATE QM001 while pop maintenance is on. With p_hold_under_full on a
-- queue whose minPopWaitTime is set, a batch that would be non-empty but under-full is not
-- claimed: SQLSTATE QM002 says so, its detail carrying minPopWaitTime (ms).
create function queen.pop(
  p_queue text, p_partition text, p_namespace text, p_task text, p_group text,
  p_batch integer, p_max_partitions integer, p_auto_ack boolean, p_lease_seconds integer,
  p_lease_id uuid, p_subscription_mode text, p_subscription_from timestamptz, p_holder text,
  p_hold_under_full boolean)
returns table (queue_name text, partition_id uuid, partition_name text, id uuid, transaction_id text,
               trace_id text, payload text, encrypted boolean, producer_sub text, created_at text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_queue_ids uuid[];
  v_remaining integer := p_batch;
  v_claimed integer := 0;
  v_candidate record;
  v_cursor queen.cursors;
  v_end bigint;
  v_delivered integer;
  v_redelivered integer;
  v_lease_seconds integer;
  v_min_wait integer;
  v_claims jsonb := '[]';
begin
  if queen.pop_maintenance() then
    raise exception 'pop maintenance is on' using errcode = 'QM001';
  end if;

  if p_queue is not null then
    perform queen.ensure_queues(array[p_queue]);
    v_queue_ids := array(select q.id from queen.queues q where q.name = p_queue);
  else
    v_queue_ids := array(
      select q.id from queen.queues q
      where (p_namespace = '' or q.namespace = p_namespace) and (p_task = '' or q.task = p_task));
  end if;

  -- A pop that carries a start position creates the group's durable subscription where it has
  -- none yet; an existing record wins. Queue mode never seeds.
  if p_group <> '__QUEUE_MODE__' and (p_subscription_mode = 'new' or p_subscription_from is not null) then
    insert into queen.subscriptions (queue_id, consumer_group, mode, start_at)
    select qid, p_group, case when p_subscription_from is not null then 'from' else 'new' end,
           coalesce(p_subscription_from, now())
    from unnest(v_queue_ids) qid
    where not exists (select 1 from queen.subscriptions s where s.queue_id = qid and s.consumer_group = p_group)
    on conflict do nothing;
  end if;

  if p_hold_under_full then
    select q.min_pop_wait_time into v_min_wait from queen.queues q where q.id = any (v_queue_ids) limit 1;
    if v_min_wait > 0 and (
      select sum(least(c.available, p_batch)) between 1 and p_batch - 1
      from (select * from queen.pop_candidates(v_queue_ids, p_partition, p_group)
            limit case when p_max_partitions > 0 then p_max_partitions end) c)
    then
      raise exception 'under-full batch held back' using errcode = 'QM002', detail = v_min_wait::text;
    end if;
  end if;

  for v_candidate in select * from queen.pop_candidates(v_queue_ids, p_partition, p_group)
  loop
    exit when v_remaining <= 0 or (p_max_partitions > 0 and v_claimed >= p_max_partitions);

    -- Skip, never wait for, a (partition, group) another pop is working on.
    continue when not pg_try_advisory_xact_lock(hashtext(v_candidate.pid::text), hashtext(p_group));
    if not v_candidate.has_cursor then
      perform queen.ensure_cursor(v_candidate.pid, p_group);
    end if;
    select * into v_cursor from queen.cursors c
    where c.partition_id = v_candidate.pid and c.consumer_group = p_group
    for update skip locked;
    continue when not found;

    -- Re-check under the lock: the candidate list was read before it.
    continue when v_cursor.lease_expires_at > now()
      or v_cursor.retry_not_before > now()
      or (v_cursor.paused and (v_cursor.paused_until is null or v_cursor.paused_until > now()));
    if v_cursor.paused then -- an auto-resume time has passed
      update queen.cursors c set paused = false, paused_reason = null, paused_by = null, paused_at = null, paused_until = null
      where c.partition_id = v_candidate.pid and c.consumer_group = p_group;
    end if;

    select p.head_offset into v_end from queen.partitions p where p.id = v_candidate.pid;
    if v_candidate.delayed_processing > 0 then
      select s.last_offset into v_end
      from queen.segments s
      where s.partition_id = v_candidate.pid
        and s.created_at <= now() - make_interval(secs => v_candidate.delayed_processing)
      order by s.first_offset desc
      limit 1;
      continue when not found;
    end if;
    v_end := least(v_end, v_cursor.committed_offset + v_remaining);
    continue when v_end <= v_cursor.committed_offset;

    return query
    select v_candidate.qname, m.partition_id, v_candidate.pname, m.id, m.transaction_id, m.trace_id,
           m.payload::text, m.encrypted, m.producer_sub, queen.iso(s.created_at)
    from queen.messages m
    join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
    where m.partition_id = v_candidate.pid
      and m."offset" > v_cursor.committed_offset and m."offset" <= v_end
      and not (m."offset" = any (v_cursor.acked_offsets))
    order by m."offset";
    get diagnostics v_delivered = row_count;
    continue when v_delivered = 0;

    -- Redelivery: offsets at or below the highest ever delivered to this group.
    v_redelivered := 0;
    if v_cursor.max_delivered_offset > v_cursor.committed_offset then
      insert into queen.message_attempts as a (partition_id, consumer_group, "offset", deliveries, last_delivered_at)
      select v_candidate.pid, p_group, o, 2, now()
      from generate_series(v_cursor.committed_offset + 1, least(v_end, v_cursor.max_delivered_offset)) o
      where not (o = any (v_cursor.acked_offsets))
      on conflict (partition_id, consumer_group, "offset")
      do update set deliveries = a.deliveries + 1, last_delivered_at = now();
      get diagnostics v_redelivered = row_count;
    end if;

    v_lease_seconds := case when p_lease_seconds > 0 then p_lease_seconds else v_candidate.lease_time end;
    update queen.cursors c set
      committed_offset = case when p_auto_ack then adv.committed else c.committed_offset end,
      acked_offsets = case when p_auto_ack then adv.done else c.acked_offsets end,
      lease_id = case when p_auto_ack then null else p_lease_id end,
      lease_end_offset = case when p_auto_ack then null else v_end end,
      lease_acquired_at = case when p_auto_ack then null else now() end,
      lease_expires_at = case when p_auto_ack then null else now() + make_interval(secs => v_lease_seconds) end,
      lease_holder = case when p_auto_ack then null else p_holder end,
      lease_extensions = 0,
      retry_not_before = null,
      max_delivered_offset = greatest(c.max_delivered_offset, v_end),
      deliveries = c.deliveries + v_delivered,
      redeliveries = c.redeliveries + v_redelivered,
      lease_expiries = c.lease_expiries + case when v_cursor.lease_id is not null then 1 else 0 end,
      last_claim_at = now()
    from queen.advance(v_end, v_cursor.acked_offsets) adv
    where c.partition_id = v_candidate.pid and c.consumer_group = p_group;

    v_remaining := v_remaining - v_delivered;
    v_claimed := v_claimed + 1;
    v_claims := v_claims || jsonb_build_object('queue', v_candidate.qname, 'partition', v_candidate.pname,
      'partitionId', v_candidate.pid, 'count', v_delivered, 'redelivered', v_redelivered,
      'expiredLeaseReclaimed', v_cursor.lease_id is not null);
  end loop;

  if v_claimed > 0 then
    perform queen.emit(jsonb_build_object('type', 'claim', 'group', p_group, 'autoAck', p_auto_ack,
      'leaseId', case when p_auto_ack then '' else p_lease_id::text end, 'holder', p_holder, 'partitions', v_claims));
  end if;
end
$$;
