-- Removes the messages of one partition that its queue's options allow (docs/decisions.md, "The
-- storage lifecycle"): up to p_cut_any, any message (retentionSeconds, maxWaitTimeSeconds) except
-- those inside a live lease's span; up to p_cut_done, what every group has committed (ttl,
-- completedRetentionSeconds). The cursors of groups that had not consumed what went pass over it,
-- and it counts as evicted for them; a cursor held by a live lease passes when the lease ends.
-- Dead letters stay (with their copy of the message). Skips the partition (answering null) when a
-- pop, an ack or a push holds it longer than the lock timeout: it stays due. Sets when the partition is next due. Answers
-- {deleted, bytes, evicted, byOption: {option: n}}.
create or replace function queen.retain_partition(p_partition uuid, p_cut_any timestamptz, p_cut_done timestamptz, p_min_age interval,
                                       p_recheck interval)
returns jsonb
language plpgsql set lock_timeout = '200ms' as $$
declare
  v_queue queen.queues;
  v_cursors integer;
  v_any bigint := 0;
  v_done bigint := 0;
  v_span_from bigint[];
  v_span_to bigint[];
  v_gone bigint[];
  v_bytes bigint;
  v_evicted bigint;
  v_stats jsonb;
  v_any_option text;
  v_done_option text;
  v_by_option jsonb := '{}';
  v_oldest timestamptz;
  v_misses integer;
  v_backoff interval;
begin
  -- The partition, then its cursors in group order. A push, pop or ack holds them for
  -- milliseconds: wait for them (lock_timeout, set on the function) rather than skip, or a
  -- partition whose consumers pop right after each ack would be skipped run after run.
  begin
    select q.* into v_queue from queen.partitions p join queen.queues q on q.id = p.queue_id
    where p.id = p_partition for no key update of p;
    if not found then
      return null;
    end if;
    perform 1 from queen.cursors c where c.partition_id = p_partition order by c.consumer_group for update;
  exception when lock_not_available then
    return null; -- still due: the next run takes it
  end;
  select count(*) into v_cursors from queen.cursors c where c.partition_id = p_partition;

  if p_cut_any is not null then
    select coalesce(max(s.last_offset), 0) into v_any
    from queen.segments s where s.partition_id = p_partition and s.created_at < p_cut_any;
    -- what a live lease holds stays until it ends
    select coalesce(array_agg(c.committed_offset), '{}'), coalesce(array_agg(c.lease_end_offset), '{}')
    into v_span_from, v_span_to
    from queen.cursors c
    where c.partition_id = p_partition and c.lease_id is not null and c.lease_expires_at > now()
      and c.committed_offset < v_any;
  end if;
  if p_cut_done is not null and v_cursors > 0 then
    select coalesce(max(s.last_offset), 0) into v_done
    from queen.segments s where s.partition_id = p_partition and s.created_at < p_cut_done;
    select least(v_done, min(c.committed_offset)) into v_done from queen.cursors c where c.partition_id = p_partition;
  end if;

  with gone as (
    delete from queen.messages m
    where m.partition_id = p_partition and m."offset" <= greatest(v_any, v_done)
      and (m."offset" <= v_done
           or not exists (select 1 from unnest(v_span_from, v_span_to) l(f, t) where m."offset" > l.f and m."offset" <= l.t))
    returning m."offset", pg_column_size(m.payload) as size)
  select coalesce(array_agg("offset"), '{}'), coalesce(sum(size), 0) into v_gone, v_bytes from gone;

  if cardinality(v_gone) > 0 then
    delete from queen.segments s
    where s.partition_id = p_partition and s.first_offset <= (select max(x) from unnest(v_gone) x)
      and not exists (select 1 from queen.messages m
                      where m.partition_id = p_partition and m."offset" between s.first_offset and s.last_offset);
    delete from queen.message_attempts a where a.partition_id = p_partition and a."offset" = any (v_gone);

    -- Groups that had not consumed what went pass over it; it counts as evicted for them. An
    -- expired lease whose span is passed ends.
    with n as (
      select c.consumer_group, c.committed_offset as old_committed, pa.committed, pa.done,
             (select count(*) from unnest(v_gone) x where x > c.committed_offset and not (x = any (c.acked_offsets))) as evicted
      from queen.cursors c
      cross join lateral queen.passed(p_partition, c.committed_offset, c.acked_offsets) pa
      where c.partition_id = p_partition
    ),
    moved as (
      update queen.cursors c set
        committed_offset = n.committed,
        acked_offsets = n.done,
        evicted = c.evicted + n.evicted,
        lease_id = case when c.lease_end_offset <= n.committed then null else c.lease_id end,
        lease_end_offset = case when c.lease_end_offset <= n.committed then null else c.lease_end_offset end,
        lease_acquired_at = case when c.lease_end_offset <= n.committed then null else c.lease_acquired_at end,
        lease_expires_at = case when c.lease_end_offset <= n.committed then null else c.lease_expires_at end,
        lease_seconds = case when c.lease_end_offset <= n.committed then null else c.lease_seconds end,
        lease_holder = case when c.lease_end_offset <= n.committed then null else c.lease_holder end
      from n
      where c.partition_id = p_partition and c.consumer_group = n.consumer_group
        and (n.committed <> n.old_committed or n.evicted > 0)
      returning c.consumer_group, n.committed - n.old_committed as committed, n.evicted
    )
    select jsonb_agg(jsonb_build_object('queue', v_queue.id, 'group', consumer_group, 'committed', committed, 'evicted', evicted)),
           coalesce(sum(evicted), 0)
    into v_stats, v_evicted from moved;

    if v_stats is not null then
      perform queen.follow_cursors(p_partition);
      perform queen.add_group_stats(v_stats);
    end if;
    insert into queen.queue_stats as t (queue_id, shard, deleted, bytes)
    values (v_queue.id, queen.stats_shard(), cardinality(v_gone), -v_bytes)
    on conflict (queue_id, shard) do update set deleted = t.deleted + excluded.deleted, bytes = t.bytes + excluded.bytes;

    -- which option removed what: the done cut first (it removes only consumed messages)
    v_done_option := case when v_queue.completed_retention_seconds > 0 then 'completedRetentionSeconds' else 'ttl' end;
    v_any_option := case when v_queue.retention_enabled and v_queue.retention_seconds > 0
                           and (v_queue.max_wait_time_seconds = 0 or v_queue.retention_seconds <= v_queue.max_wait_time_seconds)
                         then 'retentionSeconds' else 'maxWaitTimeSeconds' end;
    select coalesce(jsonb_object_agg(k, n), '{}') into v_by_option
    from (select case when x <= v_done then v_done_option else v_any_option end as k, count(*) as n
          from unnest(v_gone) x group by 1) o;
  end if;

  -- When the partition is next due: when its oldest message comes of age under the shortest rule;
  -- if that has passed (a lagging group, a live lease or a paused consumer keeps it), after a
  -- back-off that doubles while runs remove nothing (up to the shortest rule's age, at most 15
  -- minutes), so that a partition waiting on its consumers costs one look now and then, not one
  -- per run. Never while the partition stores nothing: a push marks it due again.
  v_misses := case when cardinality(v_gone) > 0 then 0
                   else least((select p.retain_misses from queen.partitions p where p.id = p_partition) + 1, 16) end;
  v_backoff := least(p_recheck * power(2, greatest(v_misses - 1, 0)), p_min_age, interval '15 minutes');
  select min(s.created_at) into v_oldest from queen.segments s where s.partition_id = p_partition;
  update queen.partitions p set
    retain_misses = v_misses,
    retain_check_at = case when v_oldest is null then null
                           when v_oldest + p_min_age > now() then v_oldest + p_min_age
                           else now() + greatest(v_backoff, p_recheck) end
  where p.id = p_partition;

  return jsonb_build_object('deleted', cardinality(v_gone), 'bytes', v_bytes, 'evicted', coalesce(v_evicted, 0),
                            'byOption', v_by_option);
end
$$;

-- A foreign key with `on delete cascade` fires once per deleted message: measured here, it made
-- deleting 200,000 messages ten times slower (2.7 s against 0.25 s) although hardly any had a
-- trace. One statement per deleting statement costs next to nothing, and covers every path that
-- deletes messages: the lifecycle job (012), deleting a queue, deleting one message.
create or replace function queen.drop_traces_of_deleted_messages() returns trigger
language plpgsql as $$
begin
  delete from queen.traces t using gone g where t.partition_id = g.partition_id and t."offset" = g."offset";
  return null;
end
$$;

-- The history goes with its message whichever path deletes it (the lifecycle job, deleting one
-- message); one statement per deleting statement, as traces go (014).
create or replace function queen.drop_attempt_errors_of_deleted_messages() returns trigger
language plpgsql as $$
begin
  delete from queen.attempt_errors e using gone g where e.partition_id = g.partition_id and e."offset" = g."offset";
  return null;
end
$$;

-- ...and with its group: queen.delete_consumer_group() (and a partition's deletion) remove the
-- group's cursors, so a group re-created under the same name starts without the old failures.
create or replace function queen.drop_attempt_errors_of_deleted_cursors() returns trigger
language plpgsql as $$
begin
  delete from queen.attempt_errors e using gone g where e.partition_id = g.partition_id and e.consumer_group = g.consumer_group;
  return null;
end
$$;

-- One run of the lifecycle job: the partitions that are due (partitions_retain_due, read through
-- its index: a run with nothing due costs one probe, whatever the number of partitions), oldest due
-- first, at most p_budget, each in a transaction of its own (so that a push to it waits for one
-- partition's removal at most); then what outlives messages past its own retention: remembered
-- transaction ids, the deliveries history (p_delivery_hours), audit rows and dead letters, 10,000
-- rows a transaction, oldest first, batch after batch until none is due or the run has taken
-- p_seconds (each table gets one batch whatever the time). A run that stopped with something still
-- due says so (`more`), and the job runs again at once: removal keeps pace with any rate the
-- broker takes (docs/decisions.md, "The storage lifecycle"). p_summary answers what it removed,
-- also kept in system_state 'lifecycle'. A procedure, for its commits: the caller's session sets
-- what the broker's functions set in their definition (enable_seqscan = off, jit = off,
-- plan_cache_mode).
create or replace procedure queen.run_lifecycle(p_budget integer, p_audit_days integer, p_dead_letter_days integer, p_instance text,
                                     p_interval_ms integer, inout p_summary jsonb default null,
                                     p_delivery_hours integer default 24, p_seconds numeric default 5)
language plpgsql as $$
declare
  v_due record;
  v_result jsonb;
  v_queues jsonb := '{}';
  v_by_option jsonb := '{}';
  v_left integer := p_budget;
  v_visited integer := 0;
  v_skipped integer := 0;
  v_deadline timestamptz := clock_timestamp() + make_interval(secs => p_seconds);
  v_more boolean := false;
  v_kind text;
  v_n integer;
  v_gone jsonb := '{"transactionIdsForgotten": 0, "deliveriesForgotten": 0, "auditRows": 0, "deadLetters": 0}';
  v_key text;
begin
  for v_due in
    select p.id, q.name,
           least(case when q.retention_enabled and q.retention_seconds > 0 then q.retention_seconds end,
                 nullif(q.max_wait_time_seconds, 0),
                 nullif(coalesce(nullif(q.completed_retention_seconds, 0), q.ttl), 0)) * interval '1 second' as min_age,
           case when q.retention_enabled and q.retention_seconds > 0 or q.max_wait_time_seconds > 0
                then now() - make_interval(secs => least(
                       case when q.retention_enabled and q.retention_seconds > 0 then q.retention_seconds end,
                       nullif(q.max_wait_time_seconds, 0))) end as cut_any,
           case when coalesce(nullif(q.completed_retention_seconds, 0), q.ttl) > 0
                then now() - make_interval(secs => coalesce(nullif(q.completed_retention_seconds, 0), q.ttl)) end as cut_done
    from (select d.id, d.queue_id from queen.partitions d
          where d.retain_check_at <= now() order by d.retain_check_at limit p_budget) p
    join queen.queues q on q.id = p.queue_id
  loop
    if v_visited > 0 and clock_timestamp() > v_deadline then
      v_more := true; -- the partitions left stay due: the next run, at once, takes them
      exit;
    end if;
    v_left := v_left - 1;
    v_visited := v_visited + 1;
    if v_due.min_age is null then
      -- no option removes anything: not due until its options change (queen.configure_queue)
      update queen.partitions p set retain_check_at = 'infinity' where p.id = v_due.id;
      commit;
      continue;
    end if;
    v_result := queen.retain_partition(v_due.id, v_due.cut_any, v_due.cut_done, v_due.min_age,
                                       make_interval(secs => p_interval_ms / 1000.0));
    commit;
    if v_result is null then
      v_skipped := v_skipped + 1;
    elsif (v_result->>'deleted')::integer > 0 then
      v_queues := jsonb_set(v_queues, array[v_due.name], jsonb_build_object(
        'deleted', coalesce((v_queues->v_due.name->>'deleted')::bigint, 0) + (v_result->>'deleted')::bigint,
        'bytes', coalesce((v_queues->v_due.name->>'bytes')::bigint, 0) + (v_result->>'bytes')::bigint,
        'evicted', coalesce((v_queues->v_due.name->>'evicted')::bigint, 0) + (v_result->>'evicted')::bigint));
      for v_key in select jsonb_object_keys(v_result->'byOption') loop
        v_by_option := jsonb_set(v_by_option, array[v_key],
          to_jsonb(coalesce((v_by_option->>v_key)::bigint, 0) + (v_result->'byOption'->>v_key)::bigint));
      end loop;
    end if;
  end loop;

  -- Oldest first through each table's index on its time; rows found by ctid (the batch's own
  -- snapshot, inside one statement), so a delete reads nothing but the index and the rows it
  -- removes.
  foreach v_kind in array array['transactionIdsForgotten', 'deliveriesForgotten', 'auditRows', 'deadLetters'] loop
    loop
      if v_kind = 'transactionIdsForgotten' then
        delete from queen.removed_transactions r
        where r.ctid = any (array(select r2.ctid from queen.removed_transactions r2
                                  where r2.forget_at <= now() order by r2.forget_at limit 10000));
        get diagnostics v_n = row_count;
      elsif v_kind = 'deliveriesForgotten' then
        v_n := queen.forget_deliveries(p_delivery_hours, 10000);
      elsif v_kind = 'auditRows' then
        delete from queen.audit_log a
        where a.ctid = any (array(select a2.ctid from queen.audit_log a2
                                  where a2.at < now() - make_interval(days => p_audit_days) order by a2.at limit 10000));
        get diagnostics v_n = row_count;
      else
        delete from queen.dead_letters d
        where d.ctid = any (array(select d2.ctid from queen.dead_letters d2
                                  where d2.failed_at < now() - make_interval(days => p_dead_letter_days)
                                  order by d2.failed_at limit 10000));
        get diagnostics v_n = row_count;
      end if;
      commit;
      v_gone := jsonb_set(v_gone, array[v_kind], to_jsonb((v_gone->>v_kind)::bigint + v_n));
      exit when v_n < 10000;
      if clock_timestamp() > v_deadline then
        v_more := true;
        exit;
      end if;
    end loop;
  end loop;

  p_summary := jsonb_build_object('at', queen.iso(now()), 'by', p_instance, 'queues', v_queues, 'removedByOption', v_by_option,
                                   'partitionsVisited', v_visited, 'partitionsSkipped', v_skipped, 'budgetLeft', v_left,
                                   'more', v_more or v_left <= 0) || v_gone;
  update queen.system_state set value = p_summary, updated_at = now() where key = 'lifecycle';
  -- the last 20 runs, newest first (the System page)
  update queen.system_state s
     set value = (select coalesce(jsonb_agg(r.e order by r.i), '[]') from jsonb_array_elements(jsonb_build_array(p_summary) || s.value)
                    with ordinality r(e, i) where r.i <= 20),
         updated_at = now()
   where s.key = 'lifecycle_runs';
end
$$;

-- What outlives a removed message, whichever path removes it (the lifecycle job, deleting one
-- message): its dead letters keep a copy of it, to be read, requeued or discarded until
-- DEAD_LETTER_RETENTION_DAYS; and its transaction id is remembered until the dedup window, counted
-- from its push, ends (queen.push refuses a retry of it as a duplicate). One statement each per
-- deleting statement.
create or replace function queen.keep_what_outlives_messages() returns trigger
language plpgsql as $$
declare
  v_window interval := make_interval(secs => coalesce(
    (select (s.value->>'dedupWindowSeconds')::integer from queen.system_state s where s.key = 'dedup'), 7200));
begin
  update queen.dead_letters d set
    message_id = g.id, transaction_id = g.transaction_id, trace_id = g.trace_id, payload = g.payload,
    encrypted = g.encrypted, producer_sub = g.producer_sub,
    created_at = (select s.created_at from queen.segments s
                  where s.partition_id = g.partition_id and s.first_offset = g.segment_offset)
  from gone g
  where d.partition_id = g.partition_id and d."offset" = g."offset" and d.payload is null;
  insert into queen.removed_transactions (transaction_id, partition_id, message_id, forget_at)
  select g.transaction_id, g.partition_id, g.id, s.created_at + v_window
  from gone g
  join queen.segments s on s.partition_id = g.partition_id and s.first_offset = g.segment_offset
  where s.created_at + v_window > now()
  on conflict do nothing;
  return null;
end
$$;
