create or replace function queen.pop_maintenance() returns boolean
language plpgsql stable as $$
begin
  return coalesce((select (value->>'enabled')::boolean from queen.system_state where key = 'pop_maintenance'), false);
end
$$;

-- The pop (pop-routes.md): candidates come from the backlog, walked in claim order (queue priority,
-- then least recently served), a page at a time: its cost follows what it claims and skips, not how
-- many partitions the queues hold. Read it as its steps, each a function below it:
--   queen.pop_queues       the queues of the call's scope (the named queue is created if missing)
--   queen.pop_subscribe    a start position seeds the group's durable subscription
--   (the candidates)       the page of backlog rows, in claim order; each locked or skipped
--   queen.pop_unblocked    the cursor's own state: a live lease, a retry delay, a pause
--   queen.pop_claimable_to the partition's: drained, windowBuffer, delayedProcessing
--   (the span)             the next stored messages not yet done, returned to the caller
--   queen.pop_pass_gone    a span of gone messages only: the cursor passes over it
--   queen.pop_redelivered  counts the span's offsets delivered before
--   queen.pop_lease        the cursor and its backlog row take the claim
-- then minPopWaitTime's hold, the counters and the live view's claim event, once per call.
-- A skipped candidate keeps why in its backlog row's blocked_until; queen.pop_empty_reason names it.
-- Called by name (`p_queue => ...`), never by position (issue 31): the lease id, minted by the
-- caller, is the one required argument; every other has a default, the value of a pop that asks
-- nothing (pop-routes.md's defaults, which lib/broker/pop-params.ts also fills in;
-- tests/pop-signature.test.ts checks the two agree). A new parameter is one more `p_x ... default`
-- at the end, a migration dropping the signature it replaces, and no change to any caller that does
-- not use it: calls by name, and 0.1.0's positional one below, still resolve.
-- p_queue null: the discovery route (p_namespace and p_task filter); p_partition: the
-- single-partition route; p_max_partitions <= 0: no cap; p_lease_seconds <= 0: the queue's
-- leaseTime; p_hold_under_full: minPopWaitTime may hold an under-full batch back (QM002);
-- p_subject: the token's subject, kept with the lease.
-- The steps are plpgsql without settings of their own: they run under the pop's (planned once,
-- index walks only), and keep their plans for the connection.
create or replace function queen.pop(
  p_lease_id uuid,
  p_queue text default null, p_partition text default null,
  p_namespace text default '', p_task text default '', p_group text default '__QUEUE_MODE__',
  p_batch integer default 200, p_max_partitions integer default 1, p_auto_ack boolean default false,
  p_lease_seconds integer default 0, p_subscription_mode text default 'all',
  p_subscription_from timestamptz default null, p_holder text default null,
  p_hold_under_full boolean default false, p_subject text default null)
returns table (queue_name text, partition_id uuid, partition_name text, id uuid, transaction_id text,
               trace_id text, payload text, encrypted boolean, producer_sub text, created_at text)
language plpgsql -- planned once per connection, and only as index walks (tests/plans.test.ts reads the plans)
set plan_cache_mode = force_generic_plan set enable_seqscan = off set enable_bitmapscan = off
set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue_ids uuid[];
  v_remaining integer := p_batch;
  v_claimed integer := 0;
  v_tried uuid[] := '{}';
  v_page integer := greatest(16, 2 * case when p_max_partitions > 0 then p_max_partitions else least(p_batch, 500) end);
  v_seen integer;
  v_candidate record;
  v_locked record;
  v_cursor queen.cursors;
  v_end bigint;
  v_span_end bigint;
  v_delivered integer;
  v_redelivered integer;
  v_committed bigint;
  v_min_wait integer;
  v_events boolean := queen.notify_wanted(true);
  v_claims jsonb := '[]';
  v_stats jsonb := '[]';
begin
  if queen.pop_maintenance() then
    raise exception 'pop maintenance is on' using errcode = 'QM001';
  end if;
  v_queue_ids := queen.pop_queues(p_queue, p_namespace, p_task);
  if p_group <> '__QUEUE_MODE__' and (p_subscription_mode = 'new' or p_subscription_from is not null) then
    perform queen.pop_subscribe(v_queue_ids, p_queue is null, p_namespace, p_task, p_group, p_subscription_from);
  end if;
  if exists (select 1 from unnest(v_queue_ids) x
             where not exists (select 1 from queen.queue_groups g where g.queue_id = x and g.consumer_group = p_group)) then
    perform queen.join_groups(v_queue_ids, p_group);
  end if;

  <<pages>>
  loop
    v_seen := 0;
    for v_candidate in
      select c.pid, q.id as qid, q.name as qname, q.lease_time, q.delayed_processing, q.window_buffer
      from unnest(v_queue_ids) as s(qid)
      cross join lateral (select q.* from queen.queues q where q.id = s.qid offset 0) q
      cross join lateral (
        -- the named partition, on the single-partition route
        select p.id as pid, '-infinity'::timestamptz as claim_order
        from queen.partitions p
        where p_partition is not null and p.queue_id = s.qid and p.name = p_partition
          and not (p.id = any (v_tried))
        union all
        (select b.partition_id, b.last_claim_at from queen.backlog b
         where p_partition is null and b.queue_id = s.qid and b.consumer_group = p_group and b.blocked_until is null
           and not (b.partition_id = any (v_tried))
         order by b.last_claim_at, b.partition_id
         limit v_page)
        union all
        -- blocked rows whose block has passed: expired leases, finished retry delays and pauses
        (select b.partition_id, b.last_claim_at from queen.backlog b
         where p_partition is null and b.queue_id = s.qid and b.consumer_group = p_group and b.blocked_until <= now()
           and not (b.partition_id = any (v_tried))
         order by b.blocked_until
         limit v_page)
      ) c
      order by q.priority desc, c.claim_order, c.pid
    loop
      exit pages when v_remaining <= 0 or (p_max_partitions > 0 and v_claimed >= p_max_partitions);
      v_seen := v_seen + 1;
      v_tried := v_tried || v_candidate.pid;

      -- Skip, never wait for, a (partition, group) another pop or an ack is working on; no
      -- backlog row: nothing above the cursor. One statement locks both rows and reads the partition.
      select c as cursor, p.name, p.head_offset, p.last_push_at into v_locked
      from queen.cursors c
      join queen.backlog b on b.partition_id = c.partition_id and b.consumer_group = c.consumer_group
      join queen.partitions p on p.id = c.partition_id
      where c.partition_id = v_candidate.pid and c.consumer_group = p_group
      for update of c, b skip locked;
      continue when not found;

      v_cursor := queen.pop_unblocked(v_locked.cursor);
      continue when v_cursor.partition_id is null;
      v_end := queen.pop_claimable_to(v_cursor, v_locked.head_offset, v_locked.last_push_at,
                                      v_candidate.window_buffer, v_candidate.delayed_processing);
      continue when v_end is null;

      -- The span: the next v_remaining stored messages not yet done. Offsets whose message is
      -- gone (deleted, removed by the lifecycle job) inside it are passed over as done.
      select max(x.o) into v_span_end from (
        select m."offset" as o from queen.messages m
        where m.partition_id = v_candidate.pid and m."offset" > v_cursor.committed_offset and m."offset" <= v_end
          and not (m."offset" = any (v_cursor.acked_offsets))
        order by m."offset" limit v_remaining) x;
      if v_span_end is null then
        v_committed := queen.pop_pass_gone(v_cursor, v_locked.head_offset);
        if v_committed > v_cursor.committed_offset then
          v_stats := v_stats || jsonb_build_object('queue', v_candidate.qid, 'group', p_group,
            'committed', v_committed - v_cursor.committed_offset);
        end if;
        continue;
      end if;
      v_end := v_span_end;

      return query
      select v_candidate.qname, m.partition_id, v_locked.name, m.id, m.transaction_id, m.trace_id,
             m.payload::text, m.encrypted, m.producer_sub, queen.iso(s.created_at)
      from queen.messages m
      join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
      where m.partition_id = v_candidate.pid
        and m."offset" > v_cursor.committed_offset and m."offset" <= v_end
        and not (m."offset" = any (v_cursor.acked_offsets))
      order by m."offset";
      get diagnostics v_delivered = row_count;
      continue when v_delivered = 0;

      v_redelivered := case when v_cursor.max_delivered_offset > v_cursor.committed_offset
                            then queen.pop_redelivered(v_cursor, v_end) else 0 end;
      v_committed := queen.pop_lease(v_cursor, v_end, v_locked.head_offset, v_delivered, v_redelivered, p_auto_ack,
        p_lease_id, case when p_lease_seconds > 0 then p_lease_seconds else v_candidate.lease_time end, p_holder, p_subject);

      if v_committed > v_cursor.committed_offset or v_redelivered > 0 or v_cursor.lease_id is not null then
        v_stats := v_stats || jsonb_build_object('queue', v_candidate.qid, 'group', p_group,
          'committed', v_committed - v_cursor.committed_offset, 'redeliveries', v_redelivered,
          'leaseExpiries', case when v_cursor.lease_id is not null then 1 else 0 end);
      end if;
      v_remaining := v_remaining - v_delivered;
      v_claimed := v_claimed + 1;
      if v_events then
        v_claims := v_claims || jsonb_build_object('queue', v_candidate.qname, 'partition', v_locked.name,
          'partitionId', v_candidate.pid, 'count', v_delivered, 'redelivered', v_redelivered,
          'expiredLeaseReclaimed', v_cursor.lease_id is not null);
      end if;
    end loop;
    -- A page that ran out before the budget did: the next page starts past what was tried.
    exit pages when v_seen = 0 or p_partition is not null
                    or v_remaining <= 0 or (p_max_partitions > 0 and v_claimed >= p_max_partitions);
    v_page := least(v_page * 4, 10000);
  end loop;

  -- minPopWaitTime: a non-empty but under-full batch is not claimed (this raise undoes the claim).
  if p_hold_under_full and v_remaining > 0 and v_remaining < p_batch then
    select q.min_pop_wait_time into v_min_wait from queen.queues q where q.id = any (v_queue_ids) limit 1;
    if v_min_wait > 0 then
      raise exception 'under-full batch held back' using errcode = 'QM002', detail = v_min_wait::text;
    end if;
  end if;

  if jsonb_array_length(v_stats) > 0 then
    perform queen.add_group_stats(v_stats);
  end if;
  if v_claimed > 0 and v_events then
    perform queen.emit(jsonb_build_object('type', 'claim', 'group', p_group, 'autoAck', p_auto_ack,
      'leaseId', case when p_auto_ack then '' else p_lease_id::text end, 'holder', p_holder, 'partitions', v_claims));
  end if;
end
$$;

-- The queues of a pop's scope: the named one (created as a push would, when missing), or those of
-- the discovery route's namespace and task.
create or replace function queen.pop_queues(p_queue text, p_namespace text, p_task text) returns uuid[]
language plpgsql as $$
declare
  v_ids uuid[];
begin
  if p_queue is null then
    return array(select q.id from queen.queues q
                 where (p_namespace = '' or q.namespace = p_namespace) and (p_task = '' or q.task = p_task));
  end if;
  v_ids := array(select q.id from queen.queues q where q.name = p_queue);
  if cardinality(v_ids) = 0 then
    perform queen.ensure_queues(array[p_queue]);
    v_ids := array(select q.id from queen.queues q where q.name = p_queue);
  end if;
  return v_ids;
end
$$;

-- A pop that carries a start position (subscriptionMode=new, subscriptionFrom) creates the group's
-- durable subscription where it has none yet; an existing record wins. Queue mode never seeds.
-- On the discovery route the group subscribes to the scope itself, so that queues of the scope
-- created later adopt the same start (011).
create or replace function queen.pop_subscribe(p_queue_ids uuid[], p_discovery boolean, p_namespace text, p_task text,
                                               p_group text, p_from timestamptz) returns void
language plpgsql as $$
begin
  if p_discovery then
    insert into queen.scope_subscriptions (namespace, task, consumer_group, mode, start_at)
    values (p_namespace, p_task, p_group, case when p_from is not null then 'from' else 'new' end, coalesce(p_from, now()))
    on conflict do nothing;
  end if;
  insert into queen.subscriptions (queue_id, consumer_group, mode, start_at)
  select qid, p_group, case when p_from is not null then 'from' else 'new' end,
         coalesce((select ss.start_at from queen.scope_subscriptions ss
                   where p_discovery and ss.namespace = p_namespace and ss.task = p_task and ss.consumer_group = p_group),
                  p_from, now())
  from unnest(p_queue_ids) qid
  where not exists (select 1 from queen.subscriptions s where s.queue_id = qid and s.consumer_group = p_group)
  on conflict do nothing;
end
$$;

-- The locked cursor a claim may take, or a row of nulls when its own state forbids one now (a live
-- lease, a retry delay, a pause): the backlog row, which mirrors the cursor and is corrected where
-- it lags, then keeps the block's end, so that pops pass it over until then. On the way: a pause
-- whose auto-resume time passed ends, and deadLetterAfterExpiries (ways_out.sql) may dead-letter
-- the message an expired lease sits on (the cursor is read again).
create or replace function queen.pop_unblocked(p_cursor queen.cursors) returns queen.cursors
language plpgsql as $$
declare
  v_block timestamptz := queen.cursor_block(p_cursor);
begin
  if v_block is not null then
    update queen.backlog b set blocked_until = v_block
    where b.partition_id = p_cursor.partition_id and b.consumer_group = p_cursor.consumer_group;
    return null;
  end if;
  if p_cursor.lease_id is not null and queen.expired_too_often(p_cursor) then
    select * into p_cursor from queen.cursors c
    where c.partition_id = p_cursor.partition_id and c.consumer_group = p_cursor.consumer_group;
  end if;
  if p_cursor.paused then
    update queen.cursors c set paused = false, paused_reason = null, paused_by = null, paused_at = null, paused_until = null
    where c.partition_id = p_cursor.partition_id and c.consumer_group = p_cursor.consumer_group;
  end if;
  return p_cursor;
end
$$;

-- The highest offset of the partition a claim may deliver now, or null when none: drained (its
-- backlog row goes), inside windowBuffer of the last push, or nothing older than delayedProcessing
-- (the backlog row is blocked until that changes).
create or replace function queen.pop_claimable_to(p_cursor queen.cursors, p_head bigint, p_last_push timestamptz,
                                                  p_window_buffer integer, p_delayed_processing integer) returns bigint
language plpgsql as $$
declare
  v_end bigint := p_head;
begin
  if p_head <= p_cursor.committed_offset then
    perform queen.drop_drained(p_cursor.partition_id, p_cursor.consumer_group, p_cursor.committed_offset);
    return null;
  end if;
  if p_window_buffer > 0 and p_last_push > now() - make_interval(secs => p_window_buffer) then
    update queen.backlog b set blocked_until = p_last_push + make_interval(secs => p_window_buffer)
    where b.partition_id = p_cursor.partition_id and b.consumer_group = p_cursor.consumer_group;
    return null;
  end if;
  if p_delayed_processing > 0 then
    select s.last_offset into v_end
    from queen.segments s
    where s.partition_id = p_cursor.partition_id
      and s.created_at <= now() - make_interval(secs => p_delayed_processing)
    order by s.first_offset desc
    limit 1;
    if v_end is null or v_end <= p_cursor.committed_offset then
      update queen.backlog b
      set blocked_until = queen.pending_since(p_cursor.partition_id, p_cursor.committed_offset)
                          + make_interval(secs => p_delayed_processing)
      where b.partition_id = p_cursor.partition_id and b.consumer_group = p_cursor.consumer_group;
      return null;
    end if;
  end if;
  return v_end;
end
$$;

-- Nothing stored to deliver up to the claimable end: the cursor passes what is gone (deleted,
-- removed by the lifecycle job). Answers the committed offset, moved or not.
create or replace function queen.pop_pass_gone(p_cursor queen.cursors, p_head bigint) returns bigint
language plpgsql as $$
declare
  v_committed bigint;
  v_done bigint[];
begin
  select pa.committed, pa.done into v_committed, v_done
  from queen.passed(p_cursor.partition_id, p_cursor.committed_offset, p_cursor.acked_offsets) pa;
  if v_committed > p_cursor.committed_offset then
    update queen.cursors c set committed_offset = v_committed, acked_offsets = v_done
    where c.partition_id = p_cursor.partition_id and c.consumer_group = p_cursor.consumer_group;
    update queen.backlog b set pending_since = queen.pending_since(p_cursor.partition_id, v_committed)
    where b.partition_id = p_cursor.partition_id and b.consumer_group = p_cursor.consumer_group;
    if v_committed >= p_head then
      perform queen.drop_drained(p_cursor.partition_id, p_cursor.consumer_group, v_committed);
    end if;
  end if;
  return v_committed;
end
$$;

-- Redelivery: the span's offsets at or below the highest ever delivered to this group each count
-- one more delivery. Answers how many.
create or replace function queen.pop_redelivered(p_cursor queen.cursors, p_end bigint) returns integer
language plpgsql as $$
declare
  v_count integer;
begin
  insert into queen.message_attempts as a (partition_id, consumer_group, "offset", deliveries, last_delivered_at)
  select p_cursor.partition_id, p_cursor.consumer_group, m."offset", 2, now()
  from queen.messages m
  where m.partition_id = p_cursor.partition_id
    and m."offset" > p_cursor.committed_offset and m."offset" <= least(p_end, p_cursor.max_delivered_offset)
    and not (m."offset" = any (p_cursor.acked_offsets))
  on conflict (partition_id, consumer_group, "offset")
  do update set deliveries = a.deliveries + 1, last_delivered_at = now();
  get diagnostics v_count = row_count;
  return v_count;
end
$$;

-- The claim of the span (committed_offset, p_end]: the cursor and its backlog row in one
-- statement, under the lease (blocked until it ends), or, with autoAck, done at once; the token's
-- subject kept with the lease; a drained backlog row dropped. Answers the committed offset after it.
create or replace function queen.pop_lease(p_cursor queen.cursors, p_end bigint, p_head bigint, p_delivered integer,
                                           p_redelivered integer, p_auto_ack boolean, p_lease_id uuid,
                                           p_lease_seconds integer, p_holder text, p_subject text) returns bigint
language plpgsql as $$
declare
  v_committed bigint := p_cursor.committed_offset;
  v_done bigint[] := p_cursor.acked_offsets;
begin
  if p_auto_ack then
    select pa.committed, pa.done into v_committed, v_done from queen.passed(p_cursor.partition_id, p_end, p_cursor.acked_offsets) pa;
  end if;
  with claimed as (update queen.cursors c set
    committed_offset = v_committed,
    acked_offsets = v_done,
    lease_id = case when p_auto_ack then null else p_lease_id end,
    lease_end_offset = case when p_auto_ack then null else p_end end,
    lease_acquired_at = case when p_auto_ack then null else now() end,
    lease_expires_at = case when p_auto_ack then null else now() + make_interval(secs => p_lease_seconds) end,
    lease_seconds = case when p_auto_ack then null else p_lease_seconds end,
    lease_holder = case when p_auto_ack then null else p_holder end,
    lease_extensions = 0,
    retry_not_before = null,
    seeded = false,
    max_delivered_offset = greatest(c.max_delivered_offset, p_end),
    deliveries = c.deliveries + p_delivered,
    redeliveries = c.redeliveries + p_redelivered,
    lease_expiries = c.lease_expiries + case when p_cursor.lease_id is not null then 1 else 0 end,
    last_claim_at = now()
  where c.partition_id = p_cursor.partition_id and c.consumer_group = p_cursor.consumer_group)
  update queen.backlog b set
    last_claim_at = now(),
    blocked_until = case when p_auto_ack then null else now() + make_interval(secs => p_lease_seconds) end,
    pending_since = case when v_committed > p_cursor.committed_offset
                         then queen.pending_since(p_cursor.partition_id, v_committed) else b.pending_since end
  where b.partition_id = p_cursor.partition_id and b.consumer_group = p_cursor.consumer_group;
  if p_subject is not null and not p_auto_ack then
    insert into queen.lease_subjects values (p_cursor.partition_id, p_cursor.consumer_group, p_lease_id, p_subject)
    on conflict on constraint lease_subjects_pkey do update set lease_id = excluded.lease_id, subject = excluded.subject;
  end if;
  if v_committed >= p_head then
    perform queen.drop_drained(p_cursor.partition_id, p_cursor.consumer_group, v_committed);
  end if;
  return v_committed;
end
$$;

-- 0.1.0's positional signature, kept for instances of that release during a rolling upgrade
-- (docs/decisions.md, "queen.pop is called by name"). Its argument types, in its order, are not
-- the current pop's (which takes the lease id first), so a positional 0.1.0 call never matches both.
create or replace function queen.pop(
  p_queue text, p_partition text, p_namespace text, p_task text, p_group text,
  p_batch integer, p_max_partitions integer, p_auto_ack boolean, p_lease_seconds integer,
  p_lease_id uuid, p_subscription_mode text, p_subscription_from timestamptz, p_holder text,
  p_hold_under_full boolean)
returns table (queue_name text, partition_id uuid, partition_name text, id uuid, transaction_id text,
               trace_id text, payload text, encrypted boolean, producer_sub text, created_at text)
language sql as $$
  select * from queen.pop(p_lease_id => p_lease_id, p_queue => p_queue, p_partition => p_partition,
                          p_namespace => p_namespace, p_task => p_task, p_group => p_group, p_batch => p_batch,
                          p_max_partitions => p_max_partitions, p_auto_ack => p_auto_ack,
                          p_lease_seconds => p_lease_seconds, p_subscription_mode => p_subscription_mode,
                          p_subscription_from => p_subscription_from, p_holder => p_holder,
                          p_hold_under_full => p_hold_under_full, p_subject => null::text)
$$; -- (p_subject named: a call naming only this function's 14 arguments would match it too)

-- When the cursor's own state forbids a claim: a live lease, a retry delay, a pause.
create or replace function queen.cursor_block(c queen.cursors) returns timestamptz
language sql stable as $$
  select greatest(
    case when c.lease_id is not null and c.lease_expires_at > now() then c.lease_expires_at end,
    case when c.retry_not_before > now() then c.retry_not_before end,
    case when c.paused and (c.paused_until is null or c.paused_until > now()) then coalesce(c.paused_until, 'infinity') end)
$$;

-- createdAt of the message just above `committed`: segments are contiguous, so it is the last
-- segment starting at or below committed + 1 (one index probe, whatever the partition's size).
create or replace function queen.pending_since(p_partition uuid, p_committed bigint) returns timestamptz
language plpgsql stable as $$ -- plpgsql for its cached plans, as queen.passed (groups.sql)
begin
  return coalesce(
    (select s.created_at from queen.segments s
     where s.partition_id = p_partition and s.first_offset <= p_committed + 1
     order by s.first_offset desc limit 1),
    (select s.created_at from queen.segments s where s.partition_id = p_partition order by s.first_offset limit 1),
    now());
end
$$;

create or replace function queen.try_share_partition(p_partition uuid) returns boolean
language plpgsql set lock_timeout = '20ms' as $$
begin
  perform 1 from queen.partitions p where p.id = p_partition for share skip locked;
  return found;
exception when lock_not_available or deadlock_detected then
  return false;
end
$$;

-- Why an empty pop of a group on a queue found nothing, in the words of EMPTY_REASONS
-- (lib/broker/empty-reasons.ts); null for 'idle' (nothing pending, or a pending row another
-- transaction held). 'paused' when the partition asked for is paused, or (queue route) a paused
-- cursor of the group has messages pending and nothing of the group's backlog on the queue is
-- claimable now. Otherwise the cause of the block that ends first, read from the state the pop
-- skipped it for (queen.pop_unblocked, queen.pop_claimable_to): 'leased', 'retry-delay',
-- 'window-buffer', 'delayed'. Asked only after a pop came back empty; index probes bounded by the
-- paused cursors of the queue and one backlog row.
create or replace function queen.pop_empty_reason(p_queue text, p_partition text, p_group text) returns text
language plpgsql stable as $$
declare
  v_queue queen.queues;
  v_pid uuid;
  v_cursor queen.cursors;
begin
  select * into v_queue from queen.queues q where q.name = p_queue;
  if not found then
    return null;
  end if;
  if p_partition is not null then
    select c.* into v_cursor from queen.partitions p
    join queen.cursors c on c.partition_id = p.id and c.consumer_group = p_group
    where p.queue_id = v_queue.id and p.name = p_partition;
    if v_cursor.paused and (v_cursor.paused_until is null or v_cursor.paused_until > now()) then
      return 'paused';
    end if;
    v_pid := (select b.partition_id from queen.backlog b
              where b.partition_id = v_cursor.partition_id and b.consumer_group = p_group and b.blocked_until > now());
  else
    if exists (select 1 from queen.backlog b
               where b.queue_id = v_queue.id and b.consumer_group = p_group
                 and (b.blocked_until is null or b.blocked_until <= now())) then
      return null;
    end if;
    if exists (select 1 from queen.cursors c join queen.partitions p on p.id = c.partition_id
               where c.queue_id = v_queue.id and c.paused and c.consumer_group = p_group
                 and (c.paused_until is null or c.paused_until > now()) and p.head_offset > c.committed_offset) then
      return 'paused';
    end if;
    v_pid := (select b.partition_id from queen.backlog b
              where b.queue_id = v_queue.id and b.consumer_group = p_group and b.blocked_until > now()
              order by b.blocked_until limit 1);
    select * into v_cursor from queen.cursors c where c.partition_id = v_pid and c.consumer_group = p_group;
  end if;
  if v_pid is null then
    return null;
  end if;
  return case
    when v_cursor.lease_id is not null and v_cursor.lease_expires_at > now() then 'leased'
    when v_cursor.retry_not_before > now() then 'retry-delay'
    when v_queue.window_buffer > 0
         and (select p.last_push_at from queen.partitions p where p.id = v_pid) > now() - make_interval(secs => v_queue.window_buffer)
      then 'window-buffer'
    when v_queue.delayed_processing > 0
         and queen.pending_since(v_pid, v_cursor.committed_offset) > now() - make_interval(secs => v_queue.delayed_processing)
      then 'delayed'
  end;
end
$$;

-- A pop whose empty answer says why in the same call (pop-routes.md's X-Queen-Empty): the pop's
-- rows, or on the queue routes one row of nulls whose empty_reason says why (queen.pop_empty_reason, or 'idle').
-- queen.pop's arguments, with its defaults; called by name too.
create or replace function queen.pop_or_why(
  p_lease_id uuid,
  p_queue text default null, p_partition text default null,
  p_namespace text default '', p_task text default '', p_group text default '__QUEUE_MODE__',
  p_batch integer default 200, p_max_partitions integer default 1, p_auto_ack boolean default false,
  p_lease_seconds integer default 0, p_subscription_mode text default 'all',
  p_subscription_from timestamptz default null, p_holder text default null,
  p_hold_under_full boolean default false, p_subject text default null)
returns table (queue_name text, partition_id uuid, partition_name text, id uuid, transaction_id text,
               trace_id text, payload text, encrypted boolean, producer_sub text, created_at text, empty_reason text)
language plpgsql as $$
begin
  return query select r.*, null::text
  from queen.pop(p_lease_id => p_lease_id, p_queue => p_queue, p_partition => p_partition,
                 p_namespace => p_namespace, p_task => p_task, p_group => p_group, p_batch => p_batch,
                 p_max_partitions => p_max_partitions, p_auto_ack => p_auto_ack,
                 p_lease_seconds => p_lease_seconds, p_subscription_mode => p_subscription_mode,
                 p_subscription_from => p_subscription_from, p_holder => p_holder,
                 p_hold_under_full => p_hold_under_full, p_subject => p_subject) r;
  if not found and p_queue is not null then
    return query select null::text, null::uuid, null::text, null::uuid, null::text, null::text, null::text,
      null::boolean, null::text, null::text, coalesce(queen.pop_empty_reason(p_queue, p_partition, p_group), 'idle');
  end if;
end
$$;
