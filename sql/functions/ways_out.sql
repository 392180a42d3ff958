-- Issue 20: the operator's ways out of an incident (a poison message, a dead holder) and the
-- deliveries history the Message page lists.

-- The deliveries history past its retention, a batch at a time (the lifecycle job's leader calls
-- it); a delivery whose lease is still held stays.
create or replace function queen.forget_deliveries(p_hours integer, p_limit integer) returns integer
language plpgsql set enable_seqscan = off as $$
declare
  v_count integer;
begin
  delete from queen.deliveries d
  where d.id in (select x.id from queen.deliveries x
                 where x.claimed_at < now() - make_interval(hours => p_hours)
                   and (x.ended_at is not null or not exists (select 1 from queen.cursors c where c.lease_id = x.lease_id))
                 order by x.claimed_at limit p_limit);
  get diagnostics v_count = row_count;
  delete from queen.group_members m where m.seen_at < now() - make_interval(hours => p_hours);
  return v_count;
end
$$;

-- A way out for a poison message: the message at p_transaction_id (or, when null, the first one
-- the group has not done: the one its cursor is stuck on) is moved to the group's dead letters
-- (p_action 'dead-letter') or skipped ('skip'), and counts as done for the group, so its next pop
-- delivers the next message. Fenced as a force release is: the lease that covers it ends (its
-- holder's acks with that id are refused; the rest of its span is claimable again), and with
-- p_check_lease the action is refused unless that lease is p_lease (null: none), the one the
-- operator saw. Audited. Answers {error} or what it did.
-- p_hold (issue 34): a crash-looping consumer re-claims the message every few seconds, so the lease
-- the operator saw is gone by the time they confirm. Refused so, the call holds the cursor instead
-- (paused, with an auto-resume 2 minutes on: no pop re-claims it, its current lease stays the one on
-- it, live or expired) and answers which lease and holder that is; the same confirm with that lease
-- then acts, and lifts the hold.
-- The pause reason of a set-aside's hold starts with this: the way out lifts only its own hold.
create or replace function queen.set_aside_hold() returns text language sql immutable as $$ select 'held for a set-aside: ' $$;

create or replace function queen.set_aside(p_partition uuid, p_group text, p_transaction_id text, p_check_lease boolean,
                                           p_lease uuid, p_action text, p_reason text, p_actor text,
                                           p_hold boolean default false)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
  v_queue_name text;
  v_partition_name text;
  v_head bigint;
  v_cursor queen.cursors;
  v_offset bigint;
  v_txid text;
  v_lease uuid;
  v_expired boolean := false;
  v_committed bigint;
  v_done bigint[];
  v_attempts queen.message_attempts;
  v_old_committed bigint;
  v_holder text;
  v_details jsonb;
begin
  select p.queue_id, q.name, p.name, p.head_offset into v_queue, v_queue_name, v_partition_name, v_head
  from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = p_partition;
  if not found then
    return jsonb_build_object('error', 'Partition not found', 'status', 404);
  end if;
  select * into v_cursor from queen.cursors c where c.partition_id = p_partition and c.consumer_group = p_group for update;
  if not found then
    return jsonb_build_object('error', 'The group has not reached this partition', 'status', 404);
  end if;
  if p_transaction_id is null then
    select m."offset", m.transaction_id into v_offset, v_txid from queen.messages m
    where m.partition_id = p_partition and m."offset" > v_cursor.committed_offset and not (m."offset" = any (v_cursor.acked_offsets))
    order by m."offset" limit 1;
    if not found then
      return jsonb_build_object('error', 'The group has nothing pending on this partition', 'status', 409);
    end if;
  else
    select m."offset", m.transaction_id into v_offset, v_txid from queen.messages m
    where m.partition_id = p_partition and m.transaction_id = p_transaction_id;
    if not found then
      return jsonb_build_object('error', 'Message not found', 'status', 404);
    end if;
    if v_offset <= v_cursor.committed_offset or v_offset = any (v_cursor.acked_offsets) then
      return jsonb_build_object('error', 'The group is already done with this message', 'status', 409);
    end if;
  end if;
  -- the lease on it: live, or expired and not yet reclaimed (the stuck one)
  v_lease := case when v_cursor.lease_id is not null and v_offset <= v_cursor.lease_end_offset then v_cursor.lease_id end;
  if p_check_lease and v_lease is distinct from p_lease then
    if p_hold and not v_cursor.paused then
      update queen.cursors c set paused = true, paused_reason = queen.set_aside_hold() || p_reason, paused_by = p_actor,
        paused_at = now(), paused_until = now() + interval '2 minutes'
      where c.partition_id = p_partition and c.consumer_group = p_group
      returning * into v_cursor;
      update queen.backlog b set blocked_until = queen.cursor_block(v_cursor)
      where b.partition_id = p_partition and b.consumer_group = p_group;
      perform queen.audit(p_actor, 'cursor.pause', 'cursor', p_partition::text || '/' || p_group,
        queen.set_aside_hold() || p_reason, 'held',
        jsonb_build_object('until', queen.iso(v_cursor.paused_until), 'queue', v_queue_name, 'group', p_group,
          'offset', v_offset, 'transactionId', v_txid, 'currentLeaseId', v_lease,
          'partitions', jsonb_build_array(jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name,
                                                             'partitionId', p_partition, 'group', p_group))));
    end if;
    return jsonb_build_object('error', case when v_lease is null then 'The lease you saw on it has ended'
                                            else 'Another lease holds it now' end,
                              'status', 409, 'currentLeaseId', v_lease, 'offset', v_offset, 'transactionId', v_txid,
                              'holder', case when v_lease is not null then v_cursor.lease_holder end,
                              'claimedAt', case when v_lease is not null then queen.iso(v_cursor.lease_acquired_at) end,
                              'expiresAt', case when v_lease is not null then queen.iso(v_cursor.lease_expires_at) end,
                              'deliveries', coalesce((select a.deliveries from queen.message_attempts a
                                                      where a.partition_id = p_partition and a.consumer_group = p_group
                                                        and a."offset" = v_offset), 1),
                              'heldUntil', case when v_cursor.paused and v_cursor.paused_reason like queen.set_aside_hold() || '%'
                                                then queen.iso(v_cursor.paused_until) end);
  end if;
  v_expired := v_lease is not null and v_cursor.lease_expires_at <= now();
  v_old_committed := v_cursor.committed_offset;
  v_holder := case when v_lease is not null then v_cursor.lease_holder end;

  select * into v_attempts from queen.message_attempts a
  where a.partition_id = p_partition and a.consumer_group = p_group and a."offset" = v_offset;
  if p_action = 'dead-letter' then
    insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
    values (p_partition, p_group, v_offset, coalesce(v_attempts.last_error, 'moved to the dead letters by ' || p_actor),
            coalesce(v_attempts.failures, 0))
    on conflict (partition_id, consumer_group, "offset") do update
      set error_message = excluded.error_message, retry_count = excluded.retry_count, failed_at = now();
  end if;

  select pa.committed, pa.done into v_committed, v_done
  from queen.passed(p_partition, v_cursor.committed_offset, v_cursor.acked_offsets || v_offset) pa;
  -- queen.expired_too_often says the lease it ends expired (`queen.lease_end_as`)
  perform set_config('queen.lease_end', coalesce(nullif(current_setting('queen.lease_end_as', true), ''),
                                                 case p_action when 'dead-letter' then 'dead-lettered' else 'skipped' end), true);
  update queen.cursors c set
    committed_offset = v_committed,
    acked_offsets = v_done,
    dead_letters = c.dead_letters + case when p_action = 'dead-letter' then 1 else 0 end,
    -- past the message that failed: the next one waits for no retry delay
    retry_not_before = null,
    lease_expiries = c.lease_expiries + case when v_expired then 1 else 0 end,
    lease_id = case when v_lease is null then c.lease_id end,
    lease_end_offset = case when v_lease is null then c.lease_end_offset end,
    lease_acquired_at = case when v_lease is null then c.lease_acquired_at end,
    lease_expires_at = case when v_lease is null then c.lease_expires_at end,
    lease_seconds = case when v_lease is null then c.lease_seconds end,
    lease_holder = case when v_lease is null then c.lease_holder end,
    lease_extensions = case when v_lease is null then c.lease_extensions else 0 end,
    -- a hold this way out took (p_hold) ends with it
    paused = c.paused and coalesce(c.paused_reason not like queen.set_aside_hold() || '%', true),
    paused_reason = case when c.paused_reason like queen.set_aside_hold() || '%' then null else c.paused_reason end,
    paused_by = case when c.paused_reason like queen.set_aside_hold() || '%' then null else c.paused_by end,
    paused_at = case when c.paused_reason like queen.set_aside_hold() || '%' then null else c.paused_at end,
    paused_until = case when c.paused_reason like queen.set_aside_hold() || '%' then null else c.paused_until end
  where c.partition_id = p_partition and c.consumer_group = p_group
  returning * into v_cursor;
  perform set_config('queen.lease_end', '', true);

  update queen.backlog b set
    blocked_until = queen.cursor_block(v_cursor),
    pending_since = queen.pending_since(p_partition, v_committed)
  where b.partition_id = p_partition and b.consumer_group = p_group;
  if v_head <= v_committed then
    perform queen.drop_drained(p_partition, p_group, v_committed);
  end if;
  perform queen.add_group_stats(jsonb_build_array(jsonb_build_object('queue', v_queue, 'group', p_group,
    'committed', v_committed - v_old_committed,
    'deadLetters', case when p_action = 'dead-letter' then 1 else 0 end,
    'leaseExpiries', case when v_expired then 1 else 0 end)));

  v_details := jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name, 'partitionId', p_partition,
    'group', p_group, 'offset', v_offset, 'transactionId', v_txid, 'committed', v_committed,
    'failures', coalesce(v_attempts.failures, 0), 'deliveries', coalesce(v_attempts.deliveries, 1),
    'holder', v_holder,
    'partitions', jsonb_build_array(jsonb_build_object('queue', v_queue_name, 'partition', v_partition_name,
      'partitionId', p_partition, 'group', p_group, 'from', v_offset, 'to', v_offset)))
    || queen.lease_ended(v_lease) || case when v_expired then jsonb_build_object('leaseExpired', true) else '{}' end;
  perform queen.audit(p_actor, case p_action when 'dead-letter' then 'message.dead_letter' else 'message.skip' end,
    'message', p_partition || '/' || v_txid, p_reason, case p_action when 'dead-letter' then 'dead-lettered' else 'skipped' end,
    v_details);
  perform queen.emit(jsonb_build_object('type', case p_action when 'dead-letter' then 'deadLetter' else 'skip' end,
    'queue', v_queue_name, 'partition', v_partition_name, 'partitionId', p_partition, 'group', p_group,
    'offset', v_offset, 'transactionId', v_txid, 'leaseId', v_lease, 'reason', p_reason, 'actor', p_actor));
  if v_head > v_committed then
    perform queen.notify_claimable(v_queue);
  end if;
  return v_details;
end
$$;

-- deadLetterAfterExpiries (sql/024): called by the pop (one line) on a cursor whose lease expired
-- and is about to be reclaimed. When the first message the group has not done was delivered under
-- that many leases that expired (this one included), it goes to the dead letters, as an operator's
-- set-aside would put it there (audited, actor `broker`), and the pop claims from the next one.
-- Answers whether it did, so the pop reads the cursor again. Off (0) by default: pop-routes.md says
-- a lease expiry never uses retry budget.
create or replace function queen.expired_too_often(p_cursor queen.cursors) returns boolean
language plpgsql as $$
declare
  v_limit integer;
  v_offset bigint;
  v_expiries integer;
begin
  select q.dead_letter_after_expiries into v_limit from queen.queues q where q.id = p_cursor.queue_id;
  if coalesce(v_limit, 0) <= 0 or p_cursor.lease_id is null or p_cursor.lease_expires_at > now() then
    return false;
  end if;
  select m."offset" into v_offset from queen.messages m
  where m.partition_id = p_cursor.partition_id and m."offset" > p_cursor.committed_offset
    and not (m."offset" = any (p_cursor.acked_offsets)) and m."offset" <= p_cursor.lease_end_offset
  order by m."offset" limit 1;
  if v_offset is null then
    return false;
  end if;
  select count(*) + 1 into v_expiries from queen.deliveries d
  where d.partition_id = p_cursor.partition_id and d.consumer_group = p_cursor.consumer_group
    and d.from_offset <= v_offset and d.to_offset >= v_offset and d.ended = 'expired';
  if v_expiries < v_limit then
    return false;
  end if;
  perform set_config('queen.lease_end_as', 'expired', true);
  perform queen.set_aside(p_cursor.partition_id, p_cursor.consumer_group,
    (select m.transaction_id from queen.messages m where m.partition_id = p_cursor.partition_id and m."offset" = v_offset),
    false, null, 'dead-letter', format('its lease expired %s times (deadLetterAfterExpiries %s)', v_expiries, v_limit), 'broker');
  perform set_config('queen.lease_end_as', '', true);
  return true;
end
$$;
