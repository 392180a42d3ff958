-- Acknowledgements and lease operations (http-api.md; DESIGN.md §4).

-- Acks a batch as one unit: every item is judged against the leases as they stood when the call
-- began. Completions advance the cursor over the contiguous done prefix; each failed item counts
-- one failure for its message (past the queue's retryLimit it goes to the dead letters and counts
-- as done); a lease with a failure in the call is released at the end of it, and its span
-- redelivers from committed + 1 after the queue's retryDelay. Items: [{transactionId,
-- partitionId, status, error, leaseId, consumerGroup}]; p_group applies where an item has none.
create function queen.ack(p_items jsonb, p_group text)
returns table (idx integer, transaction_id text, success boolean, error text, queue_name text,
               partition_name text, lease_released boolean, dlq boolean)
language plpgsql as $$
#variable_conflict use_column
declare
  v_rows jsonb;
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
    on conflict do nothing
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
    select pc.*, adv.committed, adv.done, c.lease_end_offset,
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
      lease_holder = case when n.released then null else c.lease_holder end,
      lease_extensions = case when n.released then 0 else c.lease_extensions end,
      retry_not_before = case when n.failed then now() + make_interval(secs => n.retry_delay / 1000.0) else c.retry_not_before end,
      failures = c.failures + n.n_failed,
      dead_letters = c.dead_letters + n.n_dead,
      last_ack_at = now()
    from (select s.*, s.failed or s.committed >= s.lease_end_offset as released from next_state s) n
    where c.partition_id = n.pid and c.consumer_group = n.grp
    returning c.partition_id, c.consumer_group, n.released
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'idx', j.idx, 'txid', j.txid, 'problem', j.problem, 'qname', j.qname, 'pname', j.pname,
           'pid', j.pid, 'grp', j.grp, 'status', j.status, 'acts', j.acts,
           'released', coalesce(j.acts and u.released, false),
           'dlq', coalesce(j.status = 'failed' and exists (
             select 1 from dead d where d.partition_id = j.pid and d.consumer_group = j.grp and d."offset" = j.off), false))
           order by j.idx), '[]')
  into v_rows
  from judged j
  left join updated u on u.partition_id = j.pid and u.consumer_group = j.grp;

  return query
  select (r->>'idx')::integer, r->>'txid', r->>'problem' is null, r->>'problem', r->>'qname', r->>'pname',
         (r->>'released')::boolean, (r->>'dlq')::boolean
  from jsonb_array_elements(v_rows) r;

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

  -- A released lease leaves its span claimable again: wake the pops parked on its queue.
  perform queen.notify_claimable(p.queue_id)
  from (select distinct (r->>'pid')::uuid as pid, r->>'grp' as grp from jsonb_array_elements(v_rows) r
        where (r->>'released')::boolean) x
  join queen.cursors c on c.partition_id = x.pid and c.consumer_group = x.grp
  join queen.partitions p on p.id = c.partition_id
  where p.head_offset > c.committed_offset;
end
$$;

-- Extends every live lease row with this id to max(current expiry, now + seconds).
create function queen.extend_lease(p_lease_id uuid, p_seconds integer)
returns table (success boolean, error text, expires_at text)
language plpgsql as $$
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
  select max(c.lease_expires_at) into v_expires from queen.cursors c where c.lease_id = p_lease_id and c.lease_expires_at > now();
  if v_expires is null then
    return query select false, 'Lease already expired', null::text;
    return;
  end if;
  return query select true, null::text, queen.iso(v_expires);
end
$$;

create function queen.audit(p_actor text, p_action text, p_target_type text, p_target text, p_reason text,
                            p_result text, p_details jsonb default '{}')
returns void
language sql as $$
  insert into queen.audit_log (actor, action, target_type, target, reason, result, details)
  values (p_actor, p_action, p_target_type, p_target, p_reason, p_result, coalesce(p_details, '{}'))
$$;

-- Operator force release: ends the lease now; acks carrying its id are refused from then on.
create function queen.release_lease(p_lease_id uuid, p_reason text, p_actor text)
returns table (partition_id uuid, consumer_group text, queue_name text, partition_name text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_released jsonb;
begin
  with locked as (
    select c.partition_id, c.consumer_group from queen.cursors c
    where c.lease_id = p_lease_id
    order by c.partition_id, c.consumer_group
    for update
  ),
  released as (
    update queen.cursors c set lease_id = null, lease_end_offset = null, lease_acquired_at = null,
      lease_expires_at = null, lease_holder = null, lease_extensions = 0
    from locked l where c.partition_id = l.partition_id and c.consumer_group = l.consumer_group
    returning c.partition_id, c.consumer_group
  )
  select jsonb_agg(jsonb_build_object('partitionId', r.partition_id, 'group', r.consumer_group, 'queue', q.name,
                                      'partition', p.name, 'queueId', q.id))
  into v_released
  from released r join queen.partitions p on p.id = r.partition_id join queen.queues q on q.id = p.queue_id;

  perform queen.audit(p_actor, 'lease.release', 'lease', p_lease_id::text, p_reason,
    case when v_released is null then 'not found' else 'released' end);
  if v_released is null then
    return;
  end if;
  perform queen.emit(jsonb_build_object('type', 'release', 'leaseId', p_lease_id, 'reason', p_reason,
    'actor', p_actor, 'partitions', v_released));
  perform queen.notify_claimable(q) from (select distinct (r->>'queueId')::uuid as q from jsonb_array_elements(v_released) r) x;

  return query
  select (r->>'partitionId')::uuid, r->>'group', r->>'queue', r->>'partition' from jsonb_array_elements(v_released) r;
end
$$;
