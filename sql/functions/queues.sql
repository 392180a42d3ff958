create or replace function queen.queue_options(q queen.queues) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'leaseTime', q.lease_time,
    'retryLimit', q.retry_limit,
    'retryDelay', q.retry_delay,
    'delayedProcessing', q.delayed_processing,
    'windowBuffer', q.window_buffer,
    'minPopWaitTime', q.min_pop_wait_time,
    'maxSize', q.max_size,
    'ttl', q.ttl,
    'priority', q.priority,
    'deadLetterQueue', q.dead_letter_queue,
    'dlqAfterMaxRetries', q.dlq_after_max_retries,
    'retentionEnabled', q.retention_enabled,
    'retentionSeconds', q.retention_seconds,
    'completedRetentionSeconds', q.completed_retention_seconds,
    'encryptionEnabled', q.encryption_enabled,
    'maxWaitTimeSeconds', q.max_wait_time_seconds,
    'deadLetterAfterExpiries', q.dead_letter_after_expiries)
$$;

-- A full set (003). A new Default partition gets its cursors and is counted. A call that changes
-- something (creates the queue, changes an option, its namespace or task, or configures an implicit
-- queue) is audited as queue.configure with the options before and after and the keys that
-- changed (issue 34), and the reason an operator gave (033); a client that configures at every start
-- writes nothing when nothing changed.
create or replace function queen.configure_queue(p_name text, p_namespace text, p_task text, p_options jsonb,
                                                 p_actor text default null, p_reason text default null)
returns table (queue_id uuid, partition_id uuid, options jsonb)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue queen.queues;
  v_before queen.queues;
  v_partition uuid;
  v_created boolean;
  v_changed jsonb;
begin
  select * into v_before from queen.queues q where q.name = p_name for update;
  insert into queen.queues as q (
    id, name, namespace, task, lease_time, retry_limit, retry_delay, delayed_processing,
    window_buffer, min_pop_wait_time, max_size, ttl, priority, dead_letter_queue,
    dlq_after_max_retries, retention_enabled, retention_seconds, completed_retention_seconds,
    encryption_enabled, max_wait_time_seconds, dead_letter_after_expiries, configured)
  values (
    queen.uuidv7(), p_name, p_namespace, p_task,
    (p_options->>'leaseTime')::integer, (p_options->>'retryLimit')::integer,
    (p_options->>'retryDelay')::integer, (p_options->>'delayedProcessing')::integer,
    (p_options->>'windowBuffer')::integer, (p_options->>'minPopWaitTime')::integer,
    (p_options->>'maxSize')::integer, (p_options->>'ttl')::integer,
    (p_options->>'priority')::integer, (p_options->>'deadLetterQueue')::boolean,
    (p_options->>'dlqAfterMaxRetries')::boolean, (p_options->>'retentionEnabled')::boolean,
    (p_options->>'retentionSeconds')::integer, (p_options->>'completedRetentionSeconds')::integer,
    (p_options->>'encryptionEnabled')::boolean, (p_options->>'maxWaitTimeSeconds')::integer,
    coalesce((p_options->>'deadLetterAfterExpiries')::integer, 0), true)
  on conflict (name) do update set
    namespace = excluded.namespace, task = excluded.task,
    lease_time = excluded.lease_time, retry_limit = excluded.retry_limit,
    retry_delay = excluded.retry_delay, delayed_processing = excluded.delayed_processing,
    window_buffer = excluded.window_buffer, min_pop_wait_time = excluded.min_pop_wait_time,
    max_size = excluded.max_size, ttl = excluded.ttl, priority = excluded.priority,
    dead_letter_queue = excluded.dead_letter_queue,
    dlq_after_max_retries = excluded.dlq_after_max_retries,
    retention_enabled = excluded.retention_enabled, retention_seconds = excluded.retention_seconds,
    completed_retention_seconds = excluded.completed_retention_seconds,
    encryption_enabled = excluded.encryption_enabled,
    max_wait_time_seconds = excluded.max_wait_time_seconds,
    dead_letter_after_expiries = excluded.dead_letter_after_expiries,
    configured = true, updated_at = now()
  returning * into v_queue;
  v_created := v_queue.created_at = now(); -- inserted by this statement, not updated

  insert into queen.partitions (id, queue_id, name)
  values (queen.uuidv7(), v_queue.id, 'Default')
  on conflict (queue_id, name) do nothing
  returning id into v_partition;
  if v_partition is not null then
    insert into queen.cursors (partition_id, consumer_group, queue_id, seeded)
    select v_partition, g.consumer_group, v_queue.id, true from queen.queue_groups g where g.queue_id = v_queue.id;
    insert into queen.queue_stats as t (queue_id, shard, partitions) values (v_queue.id, queen.stats_shard(), 1)
    on conflict (queue_id, shard) do update set partitions = t.partitions + 1;
  else
    select p.id into v_partition from queen.partitions p where p.queue_id = v_queue.id and p.name = 'Default';
  end if;

  if v_created then
    perform queen.adopt_scope_subscriptions(v_queue.id);
  else
    -- the lifecycle options may have changed: the job looks at every partition again (012)
    update queen.partitions p set retain_check_at = now() where p.queue_id = v_queue.id and p.retain_check_at > now();
  end if;
  select coalesce(jsonb_agg(a.key order by a.key), '[]') into v_changed
  from jsonb_each(queen.queue_options(v_queue)) a
  where v_before.id is null or a.value is distinct from queen.queue_options(v_before)->a.key;
  if v_before.id is null or v_changed <> '[]' or v_before.namespace is distinct from v_queue.namespace
     or v_before.task is distinct from v_queue.task or not v_before.configured then
    perform queen.audit(coalesce(p_actor, 'unknown'), 'queue.configure', 'queue', v_queue.name, p_reason,
      case when v_before.id is null then 'created' else 'configured' end,
      jsonb_build_object('queue', v_queue.name, 'namespace', v_queue.namespace, 'task', v_queue.task,
        'before', case when v_before.id is not null then queen.queue_options(v_before) || jsonb_build_object(
                    'namespace', v_before.namespace, 'task', v_before.task, 'configured', v_before.configured) end,
        'after', queen.queue_options(v_queue) || jsonb_build_object('namespace', v_queue.namespace, 'task', v_queue.task,
                                                                    'configured', true),
        'changed', v_changed));
  end if;
  perform pg_notify('queen_config', v_queue.name);
  return query select v_queue.id, v_partition, queen.queue_options(v_queue);
end
$$;

-- Removes the queue and everything of it (003), cursors and backlog rows included. Audited as
-- queue.delete (issue 34) with what it removed: its options, partitions, messages stored and ever
-- pushed, dead letters, every group with its committed offset and lag, and the leases it ended (at
-- most queen.audit_partitions_limit() listed, all counted), so the queue's not-found page can say
-- who deleted it, when, and what went with it.
create or replace function queen.delete_queue(p_name text, p_actor text default null, p_reason text default null)
returns boolean
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue queen.queues;
  v_removed jsonb;
begin
  select * into v_queue from queen.queues where name = p_name for update;
  if not found then
    return false;
  end if;
  select jsonb_build_object(
    'partitions', (select count(*) from queen.partitions p where p.queue_id = v_queue.id),
    'messages', coalesce(f.stored, 0), 'pushed', coalesce(f.messages, 0), 'bytes', coalesce(f.bytes, 0),
    'deadLetters', (select coalesce(sum(d.n), 0) from queen.dead_letter_counts d
                    where d.partition_id in (select p.id from queen.partitions p where p.queue_id = v_queue.id)),
    'groups', (select coalesce(jsonb_agg(jsonb_build_object('group', g.consumer_group, 'committed', g.committed, 'lag', g.lag)
                                         order by g.consumer_group), '[]')
               from queen.group_figures() g where g.queue_id = v_queue.id),
    'liveLeases', (select count(*) from queen.cursors c where c.queue_id = v_queue.id and c.lease_id is not null),
    'leases', (select coalesce(jsonb_agg(l), '[]') from (
                 select c.lease_id as "leaseId", p.name as partition, c.partition_id as "partitionId",
                        c.consumer_group as group, c.lease_holder as holder, c.committed_offset + 1 as "from",
                        c.lease_end_offset as "to", queen.iso(c.lease_expires_at) as "expiresAt"
                 from queen.cursors c join queen.partitions p on p.id = c.partition_id
                 where c.queue_id = v_queue.id and c.lease_id is not null
                 order by p.name, c.consumer_group limit queen.audit_partitions_limit()) l))
  into v_removed
  from (select 1) one left join queen.queue_figures() f on f.queue_id = v_queue.id;
  delete from queen.messages where partition_id in (select id from queen.partitions where queue_id = v_queue.id);
  delete from queen.segments where partition_id in (select id from queen.partitions where queue_id = v_queue.id);
  delete from queen.backlog b
  where (b.queue_id::text || '/' || b.consumer_group) in
        (select g.queue_id::text || '/' || g.consumer_group from queen.queue_groups g where g.queue_id = v_queue.id);
  delete from queen.cursors where queue_id = v_queue.id;
  delete from queen.queue_stats where queue_id = v_queue.id;
  delete from queen.group_stats where queue_id = v_queue.id;
  delete from queen.queues where id = v_queue.id;
  perform queen.audit(coalesce(p_actor, 'unknown'), 'queue.delete', 'queue', v_queue.name, p_reason, 'deleted',
    jsonb_build_object('queue', v_queue.name, 'queueId', v_queue.id, 'namespace', v_queue.namespace, 'task', v_queue.task,
      'configured', v_queue.configured, 'createdAt', queen.iso(v_queue.created_at),
      'options', queen.queue_options(v_queue), 'removed', v_removed));
  return true;
end
$$;
