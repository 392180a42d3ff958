-- Deletes the messages of one partition up to the offsets its queue's options allow, moves the
-- cursors of groups that had not consumed them, and keeps segments, attempts, dead letters,
-- backlog rows and counters with them. Skips the partition (answering null) when a pop or an ack
-- holds one of its cursors: the next run takes it. Answers {deleted, bytes, evicted}.
create or replace function queen.retain_partition(p_partition uuid, p_cut_any timestamptz, p_cut_done timestamptz, p_min_age interval,
                                       p_recheck interval)
returns jsonb
language plpgsql as $$
declare
  v_queue uuid;
  v_cursors integer;
  v_locked integer;
  v_any bigint := 0;
  v_done bigint := 0;
  v_upto bigint;
  v_deleted integer;
  v_bytes bigint;
  v_evicted bigint;
  v_stats jsonb;
begin
  -- a push writing to it (or a join) holds the partition: the next run takes it
  select p.queue_id into v_queue from queen.partitions p where p.id = p_partition for no key update skip locked;
  if not found then
    return null;
  end if;
  select count(*) into v_cursors from queen.cursors c where c.partition_id = p_partition;
  select count(*) into v_locked from (
    select 1 from queen.cursors c where c.partition_id = p_partition
    order by c.consumer_group for update skip locked) l;
  if v_locked < v_cursors then
    return null;
  end if;

  if p_cut_any is not null then
    select coalesce(max(s.last_offset), 0) into v_any
    from queen.segments s where s.partition_id = p_partition and s.created_at < p_cut_any;
    -- never a message inside a live lease
    select least(v_any, coalesce(min(c.committed_offset), v_any)) into v_any
    from queen.cursors c where c.partition_id = p_partition and c.lease_id is not null and c.lease_expires_at > now();
  end if;
  if p_cut_done is not null and v_cursors > 0 then
    select coalesce(max(s.last_offset), 0) into v_done
    from queen.segments s where s.partition_id = p_partition and s.created_at < p_cut_done;
    select least(v_done, min(c.committed_offset)) into v_done from queen.cursors c where c.partition_id = p_partition;
  end if;
  v_upto := greatest(v_any, v_done);

  with gone as (
    delete from queen.messages m where m.partition_id = p_partition and m."offset" <= v_upto and v_upto > 0
    returning pg_column_size(m.payload) as size)
  select count(*), coalesce(sum(size), 0) into v_deleted, v_bytes from gone;
  delete from queen.segments s where s.partition_id = p_partition and s.last_offset <= v_upto;
  delete from queen.message_attempts a where a.partition_id = p_partition and a."offset" <= v_upto;
  delete from queen.dead_letters d where d.partition_id = p_partition and d."offset" <= v_upto;
  -- The next look: when the oldest message left comes of age, or, if it already has (a lagging
  -- group or a live lease keeps it), at the next run; never while the partition stores nothing.
  update queen.partitions p set retain_check_at = (
    select case when min(s.created_at) is null then null
                when min(s.created_at) + p_min_age > now() then min(s.created_at) + p_min_age
                else now() + p_recheck end
    from queen.segments s where s.partition_id = p_partition)
  where p.id = p_partition;

  -- Groups that had not consumed what went: their cursors move past it, and it counts as evicted
  -- for them. An expired lease over it ends.
  with moved as (
    update queen.cursors c set
      committed_offset = adv.committed,
      acked_offsets = adv.done,
      evicted = c.evicted + n.evicted,
      lease_id = case when c.lease_end_offset <= adv.committed then null else c.lease_id end,
      lease_end_offset = case when c.lease_end_offset <= adv.committed then null else c.lease_end_offset end,
      lease_acquired_at = case when c.lease_end_offset <= adv.committed then null else c.lease_acquired_at end,
      lease_expires_at = case when c.lease_end_offset <= adv.committed then null else c.lease_expires_at end,
      lease_seconds = case when c.lease_end_offset <= adv.committed then null else c.lease_seconds end,
      lease_holder = case when c.lease_end_offset <= adv.committed then null else c.lease_holder end
    from (select c0.consumer_group, c0.committed_offset as old_committed, c0.acked_offsets,
                 (v_upto - c0.committed_offset) - (select count(*) from unnest(c0.acked_offsets) x where x <= v_upto) as evicted
          from queen.cursors c0 where c0.partition_id = p_partition and c0.committed_offset < v_upto) n
    cross join lateral queen.advance(v_upto, n.acked_offsets) adv
    where c.partition_id = p_partition and c.consumer_group = n.consumer_group
    returning c.consumer_group, c.committed_offset - n.old_committed as committed, n.evicted
  )
  select jsonb_agg(jsonb_build_object('queue', v_queue, 'group', consumer_group, 'committed', committed, 'evicted', evicted)),
         coalesce(sum(evicted), 0)
  into v_stats, v_evicted from moved;

  if v_stats is not null then
    update queen.backlog b set blocked_until = queen.cursor_block(c),
                               pending_since = queen.pending_since(c.partition_id, c.committed_offset)
    from queen.cursors c
    where b.partition_id = p_partition and c.partition_id = p_partition and c.consumer_group = b.consumer_group;
    perform queen.drop_drained(p_partition, c.consumer_group, c.committed_offset)
    from queen.cursors c join queen.partitions p on p.id = c.partition_id
    where c.partition_id = p_partition and p.head_offset <= c.committed_offset;
  end if;

  insert into queen.queue_stats as t (queue_id, shard, deleted, bytes)
  values (v_queue, queen.stats_shard(), v_deleted, -v_bytes)
  on conflict (queue_id, shard) do update set deleted = t.deleted + excluded.deleted, bytes = t.bytes + excluded.bytes;
  if v_stats is not null then
    perform queen.add_group_stats(v_stats);
  end if;
  return jsonb_build_object('deleted', v_deleted, 'bytes', v_bytes, 'evicted', v_evicted);
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

-- One run of the lifecycle job over every queue whose options delete something, oldest data first,
-- at most p_budget partitions, each in a transaction of its own (so that a push to it waits for one
-- partition's deletion at most); the audit log and dead letters past their own retention go too.
-- p_summary answers what it removed, which is also kept in system_state 'lifecycle'. A procedure,
-- for its commits: the caller's session sets what the broker's functions set in their definition
-- (enable_seqscan = off, jit = off, plan_cache_mode = force_custom_plan).
create or replace procedure queen.run_lifecycle(p_budget integer, p_audit_days integer, p_dead_letter_days integer, p_instance text,
                                     p_interval_ms integer, inout p_summary jsonb default null)
language plpgsql as $$
declare
  v_queue record;
  v_partition uuid;
  v_result jsonb;
  v_queues jsonb := '{}';
  v_left integer := p_budget;
  v_skipped integer := 0;
  v_audit integer;
  v_dead integer;
begin
  for v_queue in
    select q.id, q.name,
           least(case when q.retention_enabled and q.retention_seconds > 0 then q.retention_seconds end,
                 nullif(q.max_wait_time_seconds, 0),
                 nullif(coalesce(nullif(q.completed_retention_seconds, 0), q.ttl), 0)) * interval '1 second' as min_age,
           case when q.retention_enabled and q.retention_seconds > 0 or q.max_wait_time_seconds > 0
                then now() - make_interval(secs => least(
                       case when q.retention_enabled and q.retention_seconds > 0 then q.retention_seconds end,
                       nullif(q.max_wait_time_seconds, 0))) end as cut_any,
           case when coalesce(nullif(q.completed_retention_seconds, 0), q.ttl) > 0
                then now() - make_interval(secs => coalesce(nullif(q.completed_retention_seconds, 0), q.ttl)) end as cut_done
    from queen.queues q
    where (q.retention_enabled and q.retention_seconds > 0) or q.max_wait_time_seconds > 0
       or coalesce(nullif(q.completed_retention_seconds, 0), q.ttl) > 0
    -- the queue whose work is most overdue first
    order by (select min(p.retain_check_at) from queen.partitions p where p.queue_id = q.id) nulls last
  loop
    exit when v_left <= 0;
    for v_partition in
      select p.id from queen.partitions p
      where p.queue_id = v_queue.id and p.retain_check_at <= now()
      order by p.retain_check_at
      limit v_left
    loop
      v_left := v_left - 1;
      v_result := queen.retain_partition(v_partition, v_queue.cut_any, v_queue.cut_done, v_queue.min_age,
                                         make_interval(secs => p_interval_ms / 1000.0));
      commit;
      if v_result is null then
        v_skipped := v_skipped + 1;
      elsif (v_result->>'deleted')::integer > 0 then
        v_queues := jsonb_set(v_queues, array[v_queue.name], jsonb_build_object(
          'deleted', coalesce((v_queues->v_queue.name->>'deleted')::bigint, 0) + (v_result->>'deleted')::bigint,
          'bytes', coalesce((v_queues->v_queue.name->>'bytes')::bigint, 0) + (v_result->>'bytes')::bigint,
          'evicted', coalesce((v_queues->v_queue.name->>'evicted')::bigint, 0) + (v_result->>'evicted')::bigint));
      end if;
    end loop;
  end loop;

  with gone as (
    delete from queen.audit_log a
    where a.id in (select a2.id from queen.audit_log a2 where a2.at < now() - make_interval(days => p_audit_days) order by a2.at limit 10000)
    returning 1)
  select count(*) into v_audit from gone;
  with gone as (
    delete from queen.dead_letters d
    where (d.partition_id, d.consumer_group, d."offset") in (
      select d2.partition_id, d2.consumer_group, d2."offset" from queen.dead_letters d2
      where d2.failed_at < now() - make_interval(days => p_dead_letter_days) order by d2.failed_at limit 10000)
    returning 1)
  select count(*) into v_dead from gone;

  p_summary := jsonb_build_object('at', queen.iso(now()), 'by', p_instance, 'queues', v_queues, 'partitionsSkipped', v_skipped,
                                   'auditRows', v_audit, 'deadLetters', v_dead, 'budgetLeft', v_left);
  update queen.system_state set value = p_summary, updated_at = now() where key = 'lifecycle';
end
$$;
