-- Acks a batch as one unit (005), and keeps the backlog and the counters with the cursors.
create or replace function queen.ack(p_items jsonb, p_group text)
returns table (idx integer, transaction_id text, success boolean, error text, queue_name text,
               partition_name text, lease_released boolean, dlq boolean)
language plpgsql -- planned once per connection, and only as index walks (tests/plans.test.ts reads the plans)
set plan_cache_mode = force_generic_plan set enable_seqscan = off set enable_bitmapscan = off
set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
#variable_conflict use_column
declare
  v_rows jsonb;
  v_cursors jsonb;
  v_pid uuid;
  v_grp text;
  v_lease uuid;
  v_n integer;
  v_txids text[];
  v_cursor queen.cursors;
  v_offsets bigint[];
  v_committed bigint;
  v_done bigint[];
  v_released boolean;
begin
  -- The common ack takes a short path: every item completed, all of one partition and group and
  -- lease, each a message not yet done inside the live lease's span. Its result is the one the
  -- full statement below computes; anything else (failures, other leases, unknown or done
  -- messages, several cursors) takes the full statement.
  select (min(t.e->>'partitionId'))::uuid, min(coalesce(t.e->>'consumerGroup', p_group, '__QUEUE_MODE__')),
         (min(t.e->>'leaseId'))::uuid, count(*), array_agg(t.e->>'transactionId' order by t.ord)
  into v_pid, v_grp, v_lease, v_n, v_txids
  from jsonb_array_elements(p_items) with ordinality as t(e, ord)
  having count(*) = count(*) filter (where coalesce(t.e->>'status', 'completed') = 'completed')
     and count(t.e->>'partitionId') = count(*) and count(distinct t.e->>'partitionId') = 1
     and count(distinct coalesce(t.e->>'consumerGroup', p_group, '__QUEUE_MODE__')) = 1
     and count(distinct t.e->>'leaseId') <= 1
     and count(t.e->>'transactionId') = count(*) and count(distinct t.e->>'transactionId') = count(*);
  if v_pid is not null then
    select * into v_cursor from queen.cursors c where c.partition_id = v_pid and c.consumer_group = v_grp for update;
    if found and v_cursor.lease_id is not null and v_cursor.lease_expires_at > now()
       and (v_lease is null or v_lease = v_cursor.lease_id) then
      v_offsets := array(select m."offset" from queen.messages m where m.transaction_id = any (v_txids) and m.partition_id = v_pid);
      if cardinality(v_offsets) = v_n and not exists (
           select 1 from unnest(v_offsets) o
           where o <= v_cursor.committed_offset or o > v_cursor.lease_end_offset or o = any (v_cursor.acked_offsets)) then
        select pa.committed, pa.done into v_committed, v_done
        from queen.passed(v_pid, v_cursor.committed_offset, v_cursor.acked_offsets || v_offsets) pa;
        v_released := v_committed >= v_cursor.lease_end_offset;
        update queen.cursors c set
          committed_offset = v_committed,
          acked_offsets = v_done,
          lease_id = case when v_released then null else c.lease_id end,
          lease_end_offset = case when v_released then null else c.lease_end_offset end,
          lease_acquired_at = case when v_released then null else c.lease_acquired_at end,
          lease_expires_at = case when v_released then null else c.lease_expires_at end,
          lease_seconds = case when v_released then null else c.lease_seconds end,
          lease_holder = case when v_released then null else c.lease_holder end,
          lease_extensions = case when v_released then 0 else c.lease_extensions end,
          last_ack_at = now()
        where c.partition_id = v_pid and c.consumer_group = v_grp;
        select jsonb_agg(jsonb_build_object(
                 'idx', t.ord - 1, 'txid', t.txid, 'problem', null, 'qname', q.name, 'pname', p.name,
                 'pid', v_pid, 'grp', v_grp, 'status', 'completed', 'acts', true, 'released', v_released, 'dlq', false)
                 order by t.ord),
               jsonb_build_array(jsonb_build_object(
                 'partition_id', v_pid, 'consumer_group', v_grp, 'released', v_released, 'queue_id', v_cursor.queue_id,
                 'old_committed', v_cursor.committed_offset, 'committed', v_committed, 'n_failed', 0, 'n_dead', 0))
        into v_rows, v_cursors
        from unnest(v_txids) with ordinality as t(txid, ord)
        cross join queen.partitions p
        join queen.queues q on q.id = p.queue_id
        where p.id = v_pid;
      end if;
    end if;
  end if;
  if v_rows is null then
    select * into v_rows, v_cursors from queen.ack_in_full(p_items, p_group);
  end if;

  return query
  select (r->>'idx')::integer, r->>'txid', r->>'problem' is null, r->>'problem', r->>'qname', r->>'pname',
         (r->>'released')::boolean, (r->>'dlq')::boolean
  from jsonb_array_elements(v_rows) r;
  perform queen.after_ack(v_rows, v_cursors);
end
$$;

-- The full ack statement: any mix of completions and failures, over any cursors, with every
-- item's verdict. Returns the items' verdicts and the cursors it changed, as queen.ack reads them.
-- Planned per call, as every statement was before plans were cached (issue 19): it joins the
-- call's items with cursors both ways, and only a plan made for the call's sizes may hash them.
create or replace function queen.ack_in_full(p_items jsonb, p_group text, out v_rows jsonb, out v_cursors jsonb)
language plpgsql set plan_cache_mode = force_custom_plan set enable_bitmapscan = on set enable_hashjoin = on
set enable_mergejoin = on as $$
#variable_conflict use_column
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
    cross join lateral queen.passed(
      c.partition_id, c.committed_offset,
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
end
$$;

-- What follows an ack, in its transaction: the backlog, the counters, the live view and the
-- wake-ups of parked pops, from the verdicts and changed cursors of queen.ack_in_full's shape.
create or replace function queen.after_ack(v_rows jsonb, v_cursors jsonb) returns void
language plpgsql as $$
declare
  v_c record;
  v_wake uuid[] := '{}';
begin
  if jsonb_array_length(v_cursors) = 0 then
    return;
  end if;

  -- The backlog rows follow their cursors: a released lease unblocks (or a retry delay blocks),
  -- a moved cursor moves the oldest pending time, and a drained partition leaves. A cursor at a
  -- time, by key: a cached plan joining the list with the backlog could walk the whole backlog
  -- (tests/plans.test.ts saw it).
  for v_c in
    select (x->>'partition_id')::uuid as pid, x->>'consumer_group' as grp, (x->>'queue_id')::uuid as qid,
           (x->>'committed')::bigint > (x->>'old_committed')::bigint as moved, (x->>'released')::boolean as released
    from jsonb_array_elements(v_cursors) x
  loop
    -- a drained partition's row goes first: the update then finds nothing to recompute
    perform queen.drop_drained(c.partition_id, c.consumer_group, c.committed_offset)
    from queen.cursors c join queen.partitions p on p.id = c.partition_id
    where c.partition_id = v_c.pid and c.consumer_group = v_c.grp and p.head_offset <= c.committed_offset;
    update queen.backlog b set
      blocked_until = queen.cursor_block(c),
      pending_since = case when v_c.moved then queen.pending_since(c.partition_id, c.committed_offset) else b.pending_since end
    from queen.cursors c
    where c.partition_id = v_c.pid and c.consumer_group = v_c.grp and b.partition_id = v_c.pid and b.consumer_group = v_c.grp;
    -- a released lease leaves its span claimable again: the pops parked on its queue wake
    if v_c.released and not v_c.qid = any (v_wake) and exists (
         select 1 from queen.cursors c join queen.partitions p on p.id = c.partition_id
         where c.partition_id = v_c.pid and c.consumer_group = v_c.grp and p.head_offset > c.committed_offset) then
      v_wake := v_wake || v_c.qid;
    end if;
  end loop;

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

  if cardinality(v_wake) > 0 and queen.notify_wanted(false) then
    perform queen.notify_claimable(q) from unnest(v_wake) q;
  end if;
end
$$;

-- Extends every live lease row with this id to max(current expiry, now + seconds).
create or replace function queen.extend_lease(p_lease_id uuid, p_seconds integer)
returns table (success boolean, error text, expires_at text)
-- planned per call: a plan cached on a young database takes the lease's cursors in key order by
-- walking every cursor (tests/plans.test.ts)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_expires timestamptz;
  v_c record;
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
  -- a cursor at a time, by key (as queen.after_ack)
  for v_c in select c.partition_id, c.consumer_group, c.lease_expires_at from queen.cursors c
             where c.lease_id = p_lease_id and c.lease_expires_at > now() loop
    update queen.backlog b set blocked_until = v_c.lease_expires_at
    where b.partition_id = v_c.partition_id and b.consumer_group = v_c.consumer_group;
  end loop;
  select max(c.lease_expires_at) into v_expires from queen.cursors c where c.lease_id = p_lease_id and c.lease_expires_at > now();
  if v_expires is null then
    return query select false, 'Lease already expired', null::text;
    return;
  end if;
  return query select true, null::text, queen.iso(v_expires);
end
$$;
