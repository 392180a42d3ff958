-- Push, pop, ack and lease operations on top of the backlog and counters of 007.
--
-- Every function here plans each statement for its call (plan_cache_mode = force_custom_plan).
-- A generic plan keeps the estimates of the tables as they were when it was made: made on a young,
-- near-empty database (PostgreSQL switches to one after five calls when it looks no dearer), an
-- ack's cursor lock became a hash join over every cursor (16 ms at 30,000 partitions, against
-- 0.06 ms) and stayed so for the connection's life. A custom plan sees the tables' current size.
-- The helpers called in every statement are PL/pgSQL, whose plans live with the session: a
-- SQL-language function is planned again on every call.

-- Push: as 002, plus namespace and task on every result (for in-process wake-ups), a cursor per
-- group on each new partition, the backlog rows and the counters. Partition rows are locked
-- FOR NO KEY UPDATE, which does not conflict with the key-share locks that inserting attempt rows
-- and dead letters takes on them: acks and pops on a partition never wait for a push to it.
drop function queen.push(jsonb);
create function queen.push(p_items jsonb)
returns table (idx integer, transaction_id text, status text, message_id uuid, partition_id uuid,
               trace_id text, queue_name text, namespace text, task text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queues text[] := array(select distinct e->>'queue' from jsonb_array_elements(p_items) e);
  v_now timestamptz;
  v_attempt integer := 0;
  v_qids uuid[];
  v_pnames text[];
  v_new uuid[];
  v_locked uuid[];
  v_full jsonb;
begin
  -- A queue deleted concurrently is created again, as a push after the delete would. Holding a
  -- key-share lock on each queue row (in id order, as joins lock them) keeps queen.delete_queue()
  -- and group joins out until this push commits.
  loop
    v_attempt := v_attempt + 1;
    perform queen.ensure_queues(v_queues);
    exit when (select count(*) from (select 1 from queen.queues q where q.name = any (v_queues) order by q.id for key share) l)
              = cardinality(v_queues);
    if v_attempt >= 3 then
      raise exception 'push: queues % keep disappearing', v_queues;
    end if;
  end loop;

  -- The distinct (queue, partition) pairs of the call, as two arrays read side by side: every
  -- lookup below then matches both columns of partitions' unique index from one relation.
  select array_agg(q.id order by q.id, k.p), array_agg(k.p order by q.id, k.p) into v_qids, v_pnames
  from (select distinct e->>'queue' as q, e->>'partition' as p from jsonb_array_elements(p_items) e) k
  join queen.queues q on q.name = k.q;

  with created as (
    insert into queen.partitions (id, queue_id, name)
    select queen.uuidv7(), k.qid, k.pname
    from unnest(v_qids, v_pnames) as k(qid, pname)
    where not exists (select 1 from queen.partitions x where x.queue_id = k.qid and x.name = k.pname)
    on conflict (queue_id, name) do nothing
    returning id)
  select array_agg(id) into v_new from created;

  -- Lock in id order so that concurrent multi-partition pushes cannot deadlock.
  v_locked := array(
    select p.id
    from unnest(v_qids, v_pnames) as k(qid, pname)
    join queen.partitions p on p.queue_id = k.qid and p.name = k.pname
    order by p.id
    for no key update of p);
  if cardinality(v_locked) = 0 then
    raise exception 'push: partitions not found';
  end if;

  -- Pushes to a queue with maxSize go one at a time, so that the check below sees every other one.
  perform 1 from queen.queues q where q.name = any (v_queues) and q.max_size > 0 order by q.id for no key update;

  -- The caller encrypts payloads of encrypted queues; its view of which queues those are may be
  -- stale right after a configure. Refuse rather than store plaintext: it retries with fresh flags.
  if exists (
    select 1 from jsonb_array_elements(p_items) e join queen.queues q on q.name = e->>'queue'
    where q.encryption_enabled and not coalesce((e->>'encrypted')::boolean, false))
  then
    raise exception 'push: an item for an encrypted queue is not encrypted' using errcode = 'QM003';
  end if;

  v_now := clock_timestamp();

  return query
  with parts as materialized (
    select p.id as pid, p.name as pname, p.head_offset, q.name as qname, q.namespace, q.task
    from queen.partitions p
    join queen.queues q on q.id = p.queue_id
    where p.id = any (v_locked)
  ),
  items as (
    select (t.ord - 1)::integer as idx, x.qname as queue_name, x.namespace, x.task,
           x.pid, x.head_offset,
           t.e->>'transactionId' as txid, (t.e->>'messageId')::uuid as mid,
           t.e->'payload' as payload, coalesce((t.e->>'encrypted')::boolean, false) as encrypted,
           t.e->>'producerSub' as producer_sub, t.e->>'traceId' as trace_id
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
    join parts x on x.qname = t.e->>'queue' and x.pname = t.e->>'partition'
  ),
  -- Looked up by transaction id alone so that only the (transaction_id, partition_id) index
  -- fits, whatever the planner's statistics say about a young table.
  stored as materialized (
    select m.partition_id, m.transaction_id, m.id
    from queen.messages m
    where m.transaction_id = any (array(select distinct i.txid from items i))
  ),
  judged as (
    select i.*, s.id as stored_id,
           first_value(i.idx) over w as first_idx, first_value(i.mid) over w as first_mid
    from items i
    left join stored s on s.partition_id = i.pid and s.transaction_id = i.txid
    window w as (partition by i.pid, i.txid order by i.idx)
  ),
  accepted as (
    select j.*, j.head_offset + row_number() over (partition by j.pid order by j.idx) as off
    from judged j
    where j.stored_id is null and j.first_idx = j.idx
  ),
  new_segments as (
    insert into queen.segments (partition_id, first_offset, last_offset, created_at)
    select a.pid, min(a.off), max(a.off), v_now from accepted a group by a.pid
  ),
  new_messages as (
    insert into queen.messages (partition_id, "offset", id, transaction_id, trace_id, payload,
                                encrypted, producer_sub, segment_offset)
    select a.pid, a.off, a.mid, a.txid, a.trace_id, a.payload, a.encrypted, a.producer_sub,
           a.head_offset + 1
    from accepted a
  ),
  heads as (
    update queen.partitions p
    set head_offset = h.last_off, last_push_at = v_now, retain_check_at = coalesce(p.retain_check_at, v_now)
    from (select a.pid, max(a.off) as last_off from accepted a group by a.pid) h
    where p.id = h.pid
  )
  select j.idx, j.txid,
         case when j.stored_id is null and j.first_idx = j.idx then 'queued' else 'duplicate' end,
         coalesce(j.stored_id, j.first_mid), j.pid,
         case when j.stored_id is null and j.first_idx = j.idx then j.trace_id
              else null end,
         j.queue_name, j.namespace, j.task
  from judged j
  order by j.idx;

  -- A new partition gets a cursor for each group of its queue, at the group's seed (0, unless a
  -- subscription starts after this push).
  if v_new is not null then
    insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, seeded)
    select p.id, g.consumer_group, p.queue_id,
           coalesce((select s.first_offset - 1 from queen.segments s
                     where s.partition_id = p.id and s.created_at >= sub.start_at
                     order by s.created_at, s.first_offset limit 1),
                    case when sub.start_at is null then 0 else p.head_offset end),
           true
    from queen.partitions p
    join queen.queue_groups g on g.queue_id = p.queue_id
    left join queen.subscriptions sub
      on sub.queue_id = p.queue_id and sub.consumer_group = g.consumer_group and g.consumer_group <> '__QUEUE_MODE__'
    where p.id = any (v_new)
    on conflict do nothing;
  end if;

  -- Every group now has something above its cursor on the partitions that received messages.
  insert into queen.backlog (partition_id, consumer_group, queue_id, last_claim_at, pending_since)
  select c.partition_id, c.consumer_group, c.queue_id, coalesce(c.last_claim_at, '-infinity'), v_now
  from queen.segments s
  join queen.cursors c on c.partition_id = s.partition_id
  where s.partition_id = any (v_locked) and s.created_at = v_now and c.committed_offset < s.last_offset
  on conflict do nothing;

  insert into queen.queue_stats as t (queue_id, shard, partitions, messages, bytes)
  select p.queue_id, queen.stats_shard(), count(*) filter (where p.id = any (coalesce(v_new, '{}'))),
         coalesce(sum(s.last_offset - s.first_offset + 1), 0),
         coalesce(sum((select sum(pg_column_size(m.payload)) from queen.messages m
                       where m.partition_id = s.partition_id and m."offset" between s.first_offset and s.last_offset)), 0)
  from queen.partitions p
  left join queen.segments s on s.partition_id = p.id and s.created_at = v_now
  where p.id = any (v_locked)
  group by p.queue_id
  order by p.queue_id
  on conflict (queue_id, shard) do update
    set partitions = t.partitions + excluded.partitions, messages = t.messages + excluded.messages, bytes = t.bytes + excluded.bytes;

  -- maxSize: a push that took a queue's unconsumed messages (the most behind group's lag; with no
  -- group, every stored message) above it is refused whole (this raise undoes it).
  select jsonb_build_object('queue', x.name, 'maxSize', x.max_size, 'pushed', x.pushed, 'unconsumed', x.unconsumed - x.pushed)
  into v_full
  from (
    select q.name, q.max_size,
           (select coalesce(sum(sg.last_offset - sg.first_offset + 1), 0) from queen.segments sg
            join queen.partitions p on p.id = sg.partition_id
            where p.queue_id = q.id and sg.partition_id = any (v_locked) and sg.created_at = v_now) as pushed,
           coalesce((select max(t.messages - g.committed)
                     from (select s.consumer_group, sum(s.committed) as committed from queen.group_stats s
                           where s.queue_id = q.id group by s.consumer_group) g
                     cross join (select sum(s.messages) as messages from queen.queue_stats s where s.queue_id = q.id) t),
                    (select sum(s.messages - s.deleted) from queen.queue_stats s where s.queue_id = q.id)) as unconsumed
    from queen.queues q
    where q.name = any (v_queues) and q.max_size > 0
  ) x
  where x.pushed > 0 and x.unconsumed > x.max_size
  limit 1;
  if v_full is not null then
    raise exception 'queue % is full', v_full->>'queue' using errcode = 'QM004', detail = v_full::text;
  end if;

  -- New cursors seeded above 0 count as committed.
  if v_new is not null then
    insert into queen.group_stats as t (queue_id, consumer_group, shard, committed)
    select c.queue_id, c.consumer_group, queen.stats_shard(), sum(c.committed_offset)
    from queen.cursors c
    where c.partition_id = any (v_new) and c.committed_offset > 0
    group by c.queue_id, c.consumer_group
    order by c.queue_id, c.consumer_group
    on conflict (queue_id, consumer_group, shard) do update set committed = t.committed + excluded.committed;
  end if;

  -- Other instances' parked pops and the live view learn of the push (how many messages each
  -- partition received), when there are any.
  if queen.notify_wanted(false) then
    perform pg_notify('queen_push', queen.bounded(jsonb_build_object(
              'queue', x.queue, 'namespace', x.namespace, 'task', x.task, 'at', queen.iso(v_now), 'pushed', x.pushed)))
    from (
      select q.name as queue, q.namespace, q.task, jsonb_object_agg(p.name, s.last_offset - s.first_offset + 1) as pushed
      from queen.segments s
      join queen.partitions p on p.id = s.partition_id
      join queen.queues q on q.id = p.queue_id
      where s.partition_id = any (v_locked) and s.created_at = v_now
      group by q.id
    ) x;
  end if;
end
$$;

create or replace function queen.pop_maintenance() returns boolean
language plpgsql stable as $$
begin
  return coalesce((select (value->>'enabled')::boolean from queen.system_state where key = 'pop_maintenance'), false);
end
$$;

-- Moves `committed` over the contiguous run of done offsets just above it (as 004).
create or replace function queen.advance(p_committed bigint, p_done bigint[], out committed bigint, out done bigint[])
language plpgsql immutable as $$
declare
  i integer := 1;
begin
  done := array(select distinct x from unnest(p_done) x where x > p_committed order by x);
  while i <= cardinality(done) and done[i] = p_committed + i loop
    i := i + 1;
  end loop;
  committed := p_committed + i - 1;
  done := done[i:];
end
$$;

-- Adds counter deltas to this connection's counter rows, in key order.
-- p_rows: [{queue, group, committed, redeliveries, leaseExpiries, failures, deadLetters, evicted}].
create function queen.add_group_stats(p_rows jsonb) returns void
language plpgsql as $$
begin
  insert into queen.group_stats as t (queue_id, consumer_group, shard, committed, redeliveries, lease_expiries, failures, dead_letters, evicted)
  select (r->>'queue')::uuid, r->>'group', queen.stats_shard(),
         sum(coalesce((r->>'committed')::bigint, 0)), sum(coalesce((r->>'redeliveries')::bigint, 0)),
         sum(coalesce((r->>'leaseExpiries')::bigint, 0)), sum(coalesce((r->>'failures')::bigint, 0)),
         sum(coalesce((r->>'deadLetters')::bigint, 0)), sum(coalesce((r->>'evicted')::bigint, 0))
  from jsonb_array_elements(p_rows) r
  group by (r->>'queue')::uuid, r->>'group'
  order by (r->>'queue')::uuid, r->>'group'
  on conflict (queue_id, consumer_group, shard) do update set
    committed = t.committed + excluded.committed,
    redeliveries = t.redeliveries + excluded.redeliveries,
    lease_expiries = t.lease_expiries + excluded.lease_expiries,
    failures = t.failures + excluded.failures,
    dead_letters = t.dead_letters + excluded.dead_letters,
    evicted = t.evicted + excluded.evicted;
end
$$;

-- The pop (pop-routes.md): the same contract and signature as 004, but candidates come from the
-- backlog, walked in claim order (queue priority, then least recently served), a page at a time:
-- its cost follows what it claims and skips, not how many partitions the queues hold.
create or replace function queen.pop(
  p_queue text, p_partition text, p_namespace text, p_task text, p_group text,
  p_batch integer, p_max_partitions integer, p_auto_ack boolean, p_lease_seconds integer,
  p_lease_id uuid, p_subscription_mode text, p_subscription_from timestamptz, p_holder text,
  p_hold_under_full boolean)
returns table (queue_name text, partition_id uuid, partition_name text, id uuid, transaction_id text,
               trace_id text, payload text, encrypted boolean, producer_sub text, created_at text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue_ids uuid[];
  v_remaining integer := p_batch;
  v_claimed integer := 0;
  v_tried uuid[] := '{}';
  v_page integer := greatest(16, 2 * case when p_max_partitions > 0 then p_max_partitions else least(p_batch, 500) end);
  v_seen integer;
  v_candidate record;
  v_cursor queen.cursors;
  v_block timestamptz;
  v_head bigint;
  v_last_push timestamptz;
  v_end bigint;
  v_delivered integer;
  v_redelivered integer;
  v_lease_seconds integer;
  v_committed bigint;
  v_done bigint[];
  v_min_wait integer;
  v_events boolean := queen.notify_wanted(true);
  v_claims jsonb := '[]';
  v_stats jsonb := '[]';
begin
  if queen.pop_maintenance() then
    raise exception 'pop maintenance is on' using errcode = 'QM001';
  end if;

  if p_queue is not null then
    v_queue_ids := array(select q.id from queen.queues q where q.name = p_queue);
    if cardinality(v_queue_ids) = 0 then
      perform queen.ensure_queues(array[p_queue]);
      v_queue_ids := array(select q.id from queen.queues q where q.name = p_queue);
    end if;
  else
    v_queue_ids := array(
      select q.id from queen.queues q
      where (p_namespace = '' or q.namespace = p_namespace) and (p_task = '' or q.task = p_task));
  end if;

  -- A pop that carries a start position creates the group's durable subscription where it has
  -- none yet; an existing record wins. Queue mode never seeds.
  -- On the discovery route the group subscribes to the scope itself, so that queues of the scope
  -- created later adopt the same start (011).
  if p_group <> '__QUEUE_MODE__' and (p_subscription_mode = 'new' or p_subscription_from is not null) then
    if p_queue is null then
      insert into queen.scope_subscriptions (namespace, task, consumer_group, mode, start_at)
      values (p_namespace, p_task, p_group, case when p_subscription_from is not null then 'from' else 'new' end,
              coalesce(p_subscription_from, now()))
      on conflict do nothing;
    end if;
    insert into queen.subscriptions (queue_id, consumer_group, mode, start_at)
    select qid, p_group, case when p_subscription_from is not null then 'from' else 'new' end,
           coalesce((select ss.start_at from queen.scope_subscriptions ss
                     where p_queue is null and ss.namespace = p_namespace and ss.task = p_task and ss.consumer_group = p_group),
                    p_subscription_from, now())
    from unnest(v_queue_ids) qid
    where not exists (select 1 from queen.subscriptions s where s.queue_id = qid and s.consumer_group = p_group)
    on conflict do nothing;
  end if;

  if exists (select 1 from unnest(v_queue_ids) x
             where not exists (select 1 from queen.queue_groups g where g.queue_id = x and g.consumer_group = p_group)) then
    perform queen.join_groups(v_queue_ids, p_group);
  end if;

  <<pages>>
  loop
    v_seen := 0;
    for v_candidate in
      select c.pid, p.name as pname, q.id as qid, q.name as qname, q.lease_time, q.delayed_processing, q.window_buffer
      from unnest(v_queue_ids) as s(qid)
      join queen.queues q on q.id = s.qid
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
      join queen.partitions p on p.id = c.pid
      order by q.priority desc, c.claim_order, c.pid
    loop
      exit pages when v_remaining <= 0 or (p_max_partitions > 0 and v_claimed >= p_max_partitions);
      v_seen := v_seen + 1;
      v_tried := v_tried || v_candidate.pid;

      -- Skip, never wait for, a (partition, group) another pop or an ack is working on.
      select * into v_cursor from queen.cursors c
      where c.partition_id = v_candidate.pid and c.consumer_group = p_group
      for update skip locked;
      continue when not found;
      perform 1 from queen.backlog b
      where b.partition_id = v_candidate.pid and b.consumer_group = p_group
      for update skip locked;
      continue when not found; -- nothing above the cursor (or another pop is on it)

      -- The cursor is the truth; the backlog row mirrors it and is corrected where it lags.
      v_block := queen.cursor_block(v_cursor);
      if v_block is not null then
        update queen.backlog b set blocked_until = v_block
        where b.partition_id = v_candidate.pid and b.consumer_group = p_group;
        continue;
      end if;
      if v_cursor.paused then -- an auto-resume time has passed
        update queen.cursors c set paused = false, paused_reason = null, paused_by = null, paused_at = null, paused_until = null
        where c.partition_id = v_candidate.pid and c.consumer_group = p_group;
      end if;

      select p.head_offset, p.last_push_at into v_head, v_last_push from queen.partitions p where p.id = v_candidate.pid;
      if v_head <= v_cursor.committed_offset then
        perform queen.drop_drained(v_candidate.pid, p_group, v_cursor.committed_offset);
        continue;
      end if;
      if v_candidate.window_buffer > 0 and v_last_push > now() - make_interval(secs => v_candidate.window_buffer) then
        update queen.backlog b set blocked_until = v_last_push + make_interval(secs => v_candidate.window_buffer)
        where b.partition_id = v_candidate.pid and b.consumer_group = p_group;
        continue;
      end if;
      v_end := v_head;
      if v_candidate.delayed_processing > 0 then
        select s.last_offset into v_end
        from queen.segments s
        where s.partition_id = v_candidate.pid
          and s.created_at <= now() - make_interval(secs => v_candidate.delayed_processing)
        order by s.first_offset desc
        limit 1;
        if v_end is null or v_end <= v_cursor.committed_offset then
          update queen.backlog b
          set blocked_until = queen.pending_since(v_candidate.pid, v_cursor.committed_offset)
                              + make_interval(secs => v_candidate.delayed_processing)
          where b.partition_id = v_candidate.pid and b.consumer_group = p_group;
          continue;
        end if;
      end if;
      v_end := least(v_end, v_cursor.committed_offset + v_remaining);

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

      if p_auto_ack then
        select adv.committed, adv.done into v_committed, v_done from queen.advance(v_end, v_cursor.acked_offsets) adv;
      else
        v_committed := v_cursor.committed_offset;
        v_done := v_cursor.acked_offsets;
      end if;
      v_lease_seconds := case when p_lease_seconds > 0 then p_lease_seconds else v_candidate.lease_time end;
      update queen.cursors c set
        committed_offset = v_committed,
        acked_offsets = v_done,
        lease_id = case when p_auto_ack then null else p_lease_id end,
        lease_end_offset = case when p_auto_ack then null else v_end end,
        lease_acquired_at = case when p_auto_ack then null else now() end,
        lease_expires_at = case when p_auto_ack then null else now() + make_interval(secs => v_lease_seconds) end,
        lease_seconds = case when p_auto_ack then null else v_lease_seconds end,
        lease_holder = case when p_auto_ack then null else p_holder end,
        lease_extensions = 0,
        retry_not_before = null,
        seeded = false,
        max_delivered_offset = greatest(c.max_delivered_offset, v_end),
        deliveries = c.deliveries + v_delivered,
        redeliveries = c.redeliveries + v_redelivered,
        lease_expiries = c.lease_expiries + case when v_cursor.lease_id is not null then 1 else 0 end,
        last_claim_at = now()
      where c.partition_id = v_candidate.pid and c.consumer_group = p_group;

      update queen.backlog b set
        last_claim_at = now(),
        blocked_until = case when p_auto_ack then null else now() + make_interval(secs => v_lease_seconds) end,
        pending_since = case when v_committed > v_cursor.committed_offset
                             then queen.pending_since(v_candidate.pid, v_committed) else b.pending_since end
      where b.partition_id = v_candidate.pid and b.consumer_group = p_group;
      if v_committed >= v_head then
        perform queen.drop_drained(v_candidate.pid, p_group, v_committed);
      end if;

      if v_committed > v_cursor.committed_offset or v_redelivered > 0 or v_cursor.lease_id is not null then
        v_stats := v_stats || jsonb_build_object('queue', v_candidate.qid, 'group', p_group,
          'committed', v_committed - v_cursor.committed_offset, 'redeliveries', v_redelivered,
          'leaseExpiries', case when v_cursor.lease_id is not null then 1 else 0 end);
      end if;
      v_remaining := v_remaining - v_delivered;
      v_claimed := v_claimed + 1;
      if v_events then
        v_claims := v_claims || jsonb_build_object('queue', v_candidate.qname, 'partition', v_candidate.pname,
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

-- Acks a batch as one unit (005), and keeps the backlog and the counters with the cursors.
create or replace function queen.ack(p_items jsonb, p_group text)
returns table (idx integer, transaction_id text, success boolean, error text, queue_name text,
               partition_name text, lease_released boolean, dlq boolean)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_rows jsonb;
  v_cursors jsonb;
begin
  -- Lock every cursor involved, in one global order, before reading any of them.
  perform 1 from queen.cursors c
  where (c.partition_id, c.consumer_group) in (
    select (e->>'partitionId')::uuid, coalesce(e->>'consumerGroup', p_group, '__QUEUE_MODE__')
    from jsonb_array_elements(p_items) e)
  order by c.partition_id, c.consumer_group
  for update;

  with items as (
    select (t.ord - 1)::integer as idx, t.e->>'transactionId' as txid, (t.e->>'partitionId')::uuid as pid,
           coalesce(t.e->>'status', 'completed') as status, t.e->>'error' as err, (t.e->>'leaseId')::uuid as lease,
           coalesce(t.e->>'consumerGroup', p_group, '__QUEUE_MODE__') as grp
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
  ),
  -- By transaction id alone, so that only the (transaction_id, partition_id) index fits.
  stored as materialized (
    select m.partition_id, m.transaction_id, m."offset"
    from queen.messages m
    where m.transaction_id = any (array(select distinct i.txid from items i))
  ),
  judged as (
    select i.*, m."offset" as off, p.name as pname, q.name as qname, q.retry_limit, q.retry_delay,
           c.lease_id as live_lease,
           case
             when m."offset" is null then 'Message not found'
             when m."offset" <= coalesce(c.committed_offset, 0) or m."offset" = any (c.acked_offsets) then null
             when c.lease_id is null or c.lease_expires_at <= now() or m."offset" > c.lease_end_offset
                  or i.lease <> c.lease_id then 'Invalid or expired lease'
           end as problem,
           -- the item changes something: inside the live lease and not already done
           m."offset" is not null and m."offset" > coalesce(c.committed_offset, 0)
             and not coalesce(m."offset" = any (c.acked_offsets), false)
             and c.lease_id is not null and c.lease_expires_at > now() and m."offset" <= c.lease_end_offset
             and (i.lease is null or i.lease = c.lease_id) as acts
    from items i
    left join stored m on m.transaction_id = i.txid and m.partition_id = i.pid
    left join queen.partitions p on p.id = i.pid
    left join queen.queues q on q.id = p.queue_id
    left join queen.cursors c on c.partition_id = i.pid and c.consumer_group = i.grp
  ),
  failures as (
    insert into queen.message_attempts as a (partition_id, consumer_group, "offset", deliveries, failures, last_error, last_failed_at)
    select j.pid, j.grp, j.off, 1, count(*), (array_agg(j.err order by j.idx desc))[1], now()
    from judged j
    where j.acts and j.status = 'failed'
    group by j.pid, j.grp, j.off
    on conflict (partition_id, consumer_group, "offset") do update
      set failures = a.failures + excluded.failures, last_error = excluded.last_error, last_failed_at = now()
    returning a.partition_id, a.consumer_group, a."offset", a.failures, a.last_error
  ),
  dead as (
    insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
    select f.partition_id, f.consumer_group, f."offset", f.last_error, f.failures
    from failures f
    join (select distinct j.pid, j.grp, j.off, j.retry_limit from judged j where j.acts) j
      on j.pid = f.partition_id and j.grp = f.consumer_group and j.off = f."offset"
    where f.failures > j.retry_limit
    -- dead-lettered before a seek replayed it: it dies again, and the cursor moves past it again
    on conflict (partition_id, consumer_group, "offset") do update
      set error_message = excluded.error_message, retry_count = excluded.retry_count, failed_at = now()
    returning partition_id, consumer_group, "offset"
  ),
  per_cursor as (
    select j.pid, j.grp, bool_or(j.status = 'failed') as failed, max(j.retry_delay) as retry_delay,
           count(*) filter (where j.status = 'failed') as n_failed,
           array_agg(j.off) filter (where j.status <> 'failed') as completed
    from judged j
    where j.acts
    group by j.pid, j.grp
  ),
  next_state as (
    select pc.*, adv.committed, adv.done, c.lease_end_offset, c.committed_offset as old_committed, c.queue_id,
           (select count(*) from dead d where d.partition_id = pc.pid and d.consumer_group = pc.grp) as n_dead
    from per_cursor pc
    join queen.cursors c on c.partition_id = pc.pid and c.consumer_group = pc.grp
    cross join lateral queen.advance(
      c.committed_offset,
      c.acked_offsets || coalesce(pc.completed, '{}')
        || array(select d."offset" from dead d where d.partition_id = pc.pid and d.consumer_group = pc.grp)) adv
  ),
  updated as (
    update queen.cursors c set
      committed_offset = n.committed,
      acked_offsets = n.done,
      lease_id = case when n.released then null else c.lease_id end,
      lease_end_offset = case when n.released then null else c.lease_end_offset end,
      lease_acquired_at = case when n.released then null else c.lease_acquired_at end,
      lease_expires_at = case when n.released then null else c.lease_expires_at end,
      lease_seconds = case when n.released then null else c.lease_seconds end,
      lease_holder = case when n.released then null else c.lease_holder end,
      lease_extensions = case when n.released then 0 else c.lease_extensions end,
      -- the retry delay holds back a redelivery; a failure that only dead-lettered has none
      retry_not_before = case when n.n_failed > n.n_dead then now() + make_interval(secs => n.retry_delay / 1000.0) else c.retry_not_before end,
      failures = c.failures + n.n_failed,
      dead_letters = c.dead_letters + n.n_dead,
      last_ack_at = now()
    from (select s.*, s.failed or s.committed >= s.lease_end_offset as released from next_state s) n
    where c.partition_id = n.pid and c.consumer_group = n.grp
    returning c.partition_id, c.consumer_group, n.released, n.queue_id, n.old_committed, n.committed, n.n_failed, n.n_dead
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'idx', j.idx, 'txid', j.txid, 'problem', j.problem, 'qname', j.qname, 'pname', j.pname,
           'pid', j.pid, 'grp', j.grp, 'status', j.status, 'acts', j.acts,
           'released', coalesce(j.acts and u.released, false),
           'dlq', coalesce(j.status = 'failed' and exists (
             select 1 from dead d where d.partition_id = j.pid and d.consumer_group = j.grp and d."offset" = j.off), false))
           order by j.idx), '[]'),
         (select coalesce(jsonb_agg(to_jsonb(x)), '[]') from updated x)
  into v_rows, v_cursors
  from judged j
  left join updated u on u.partition_id = j.pid and u.consumer_group = j.grp;

  return query
  select (r->>'idx')::integer, r->>'txid', r->>'problem' is null, r->>'problem', r->>'qname', r->>'pname',
         (r->>'released')::boolean, (r->>'dlq')::boolean
  from jsonb_array_elements(v_rows) r;

  if jsonb_array_length(v_cursors) = 0 then
    return;
  end if;

  -- The backlog rows follow their cursors: a released lease unblocks (or a retry delay blocks),
  -- a moved cursor moves the oldest pending time, and a drained partition leaves.
  update queen.backlog b set
    blocked_until = queen.cursor_block(c),
    pending_since = case when (x->>'committed')::bigint > (x->>'old_committed')::bigint
                         then queen.pending_since(c.partition_id, c.committed_offset) else b.pending_since end
  from jsonb_array_elements(v_cursors) x
  join queen.cursors c on c.partition_id = (x->>'partition_id')::uuid and c.consumer_group = x->>'consumer_group'
  where b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  perform queen.drop_drained(c.partition_id, c.consumer_group, c.committed_offset)
  from jsonb_array_elements(v_cursors) x
  join queen.cursors c on c.partition_id = (x->>'partition_id')::uuid and c.consumer_group = x->>'consumer_group'
  join queen.partitions p on p.id = c.partition_id
  where p.head_offset <= c.committed_offset;

  perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', x->'queue_id', 'group', x->'consumer_group',
            'committed', (x->>'committed')::bigint - (x->>'old_committed')::bigint,
            'failures', x->'n_failed', 'deadLetters', x->'n_dead')))
  from jsonb_array_elements(v_cursors) x
  where (x->>'committed')::bigint > (x->>'old_committed')::bigint or (x->>'n_failed')::bigint > 0;

  if queen.notify_wanted(true) then
    -- The live view: one event per cursor the call changed.
    perform queen.emit(jsonb_build_object('type', 'ack', 'queue', min(r->>'qname'), 'partition', min(r->>'pname'),
        'partitionId', r->>'pid', 'group', r->>'grp',
        'completed', count(*) filter (where r->>'status' <> 'failed'),
        'failed', count(*) filter (where r->>'status' = 'failed'),
        'deadLettered', count(*) filter (where (r->>'dlq')::boolean),
        'leaseReleased', bool_or((r->>'released')::boolean)))
    from jsonb_array_elements(v_rows) r
    where (r->>'acts')::boolean
    group by r->>'pid', r->>'grp';
  end if;

  if queen.notify_wanted(false) then
    -- A released lease leaves its span claimable again: wake the pops parked on its queue.
    perform queen.notify_claimable(x.queue_id)
    from (select distinct (u->>'queue_id')::uuid as queue_id from jsonb_array_elements(v_cursors) u
          join queen.cursors c on c.partition_id = (u->>'partition_id')::uuid and c.consumer_group = u->>'consumer_group'
          join queen.partitions p on p.id = c.partition_id
          where (u->>'released')::boolean and p.head_offset > c.committed_offset) x;
  end if;
end
$$;

-- Extends every live lease row with this id to max(current expiry, now + seconds).
create or replace function queen.extend_lease(p_lease_id uuid, p_seconds integer)
returns table (success boolean, error text, expires_at text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_expires timestamptz;
begin
  perform 1 from queen.cursors c where c.lease_id = p_lease_id
  order by c.partition_id, c.consumer_group for update;
  if not found then
    return query select false, 'Lease not found', null::text;
    return;
  end if;
  update queen.cursors c
  set lease_expires_at = greatest(c.lease_expires_at, now() + make_interval(secs => p_seconds)),
      lease_extensions = c.lease_extensions + 1
  where c.lease_id = p_lease_id and c.lease_expires_at > now();
  update queen.backlog b set blocked_until = c.lease_expires_at
  from queen.cursors c
  where c.lease_id = p_lease_id and c.lease_expires_at > now()
    and b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  select max(c.lease_expires_at) into v_expires from queen.cursors c where c.lease_id = p_lease_id and c.lease_expires_at > now();
  if v_expires is null then
    return query select false, 'Lease already expired', null::text;
    return;
  end if;
  return query select true, null::text, queen.iso(v_expires);
end
$$;

-- Operator force release: ends the lease now; acks carrying its id are refused from then on.
create or replace function queen.release_lease(p_lease_id uuid, p_reason text, p_actor text)
returns table (partition_id uuid, consumer_group text, queue_name text, partition_name text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_released jsonb;
begin
  with locked as (
    select c.partition_id, c.consumer_group, c.queue_id, c.lease_expires_at <= now() as expired from queen.cursors c
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
    returning c.partition_id, c.consumer_group, l.expired
  )
  select jsonb_agg(jsonb_build_object('partitionId', r.partition_id, 'group', r.consumer_group, 'queue', q.name,
                                      'partition', p.name, 'queueId', q.id, 'expired', r.expired))
  into v_released
  from released r join queen.partitions p on p.id = r.partition_id join queen.queues q on q.id = p.queue_id;

  -- a release of no lease is refused (404) and writes nothing, not even an audit row
  if v_released is null then
    return;
  end if;
  perform queen.audit(p_actor, 'lease.release', 'lease', p_lease_id::text, p_reason, 'released');
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
  select (r->>'partitionId')::uuid, r->>'group', r->>'queue', r->>'partition' from jsonb_array_elements(v_released) r;
end
$$;
