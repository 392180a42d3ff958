-- Queue configuration: every option the Queen MQ clients send, as stored, for the echo.

create function queen.queue_options(q queen.queues) returns jsonb
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
    'maxWaitTimeSeconds', q.max_wait_time_seconds)
$$;

-- A full set: the caller passes every option (omitted ones already reset to their defaults).
create function queen.configure_queue(p_name text, p_namespace text, p_task text, p_options jsonb)
returns table (queue_id uuid, partition_id uuid, options jsonb)
language plpgsql as $$
#variable_conflict use_column
declare
  v_queue queen.queues;
  v_partition uuid;
begin
  insert into queen.queues as q (
    id, name, namespace, task, lease_time, retry_limit, retry_delay, delayed_processing,
    window_buffer, min_pop_wait_time, max_size, ttl, priority, dead_letter_queue,
    dlq_after_max_retries, retention_enabled, retention_seconds, completed_retention_seconds,
    encryption_enabled, max_wait_time_seconds, configured)
  values (
    queen.uuidv7(), p_name, p_namespace, p_task,
    (p_options->>'leaseTime')::integer, (p_options->>'retryLimit')::integer,
    (p_options->>'retryDelay')::integer, (p_options->>'delayedProcessing')::integer,
    (p_options->>'windowBuffer')::integer, (p_options->>'minPopWaitTime')::integer,
    (p_options->>'maxSize')::integer, (p_options->>'ttl')::integer,
    (p_options->>'priority')::integer, (p_options->>'deadLetterQueue')::boolean,
    (p_options->>'dlqAfterMaxRetries')::boolean, (p_options->>'retentionEnabled')::boolean,
    (p_options->>'retentionSeconds')::integer, (p_options->>'completedRetentionSeconds')::integer,
    (p_options->>'encryptionEnabled')::boolean, (p_options->>'maxWaitTimeSeconds')::integer, true)
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
    configured = true, updated_at = now()
  returning * into v_queue;

  insert into queen.partitions (id, queue_id, name)
  values (queen.uuidv7(), v_queue.id, 'Default')
  on conflict (queue_id, name) do nothing;
  select p.id into v_partition from queen.partitions p where p.queue_id = v_queue.id and p.name = 'Default';

  perform pg_notify('queen_config', v_queue.name);
  return query select v_queue.id, v_partition, queen.queue_options(v_queue);
end
$$;

-- Removes the queue and everything of it: segments and messages here, partitions, cursors,
-- attempts, dead letters and subscriptions through their cascades.
create function queen.delete_queue(p_name text) returns boolean
language plpgsql as $$
declare
  v_queue uuid;
begin
  select id into v_queue from queen.queues where name = p_name for update;
  if not found then
    return false;
  end if;
  delete from queen.messages where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.segments where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.queues where id = v_queue;
  return true;
end
$$;
