-- Issue 8: a dead letter can be requeued or discarded by an operator (audited), and a message keeps
-- the error of every failed attempt, not only the last.

-- One row per failed attempt of a message in a group. Keyed by (partition, offset) first, as
-- traces are, so that the Message page and the deletion trigger below read it by its key prefix.
create table queen.attempt_errors (
  partition_id uuid not null references queen.partitions (id) on delete cascade,
  "offset" bigint not null,
  consumer_group text not null,
  attempt integer not null,
  error text,
  at timestamptz not null default now(),
  primary key (partition_id, "offset", consumer_group, attempt)
);

-- A message that fails forever would otherwise grow its history without end.
create function queen.attempt_errors_kept() returns integer
language sql immutable as $$ select 100 $$;

-- Filled from queen.message_attempts, which queen.ack() (owned elsewhere, redefined in later
-- migrations) writes: whenever `failures` grows, each new failure becomes an attempt row carrying
-- the error that came with it. Attempts are numbered on from the last one recorded, so a seek that
-- resets the attempt counts continues the history rather than colliding with it.
create function queen.record_attempt_errors() returns trigger
language plpgsql as $$
declare
  v_last integer;
begin
  select coalesce(max(e.attempt), 0) into v_last from queen.attempt_errors e
  where e.partition_id = new.partition_id and e."offset" = new."offset" and e.consumer_group = new.consumer_group;
  insert into queen.attempt_errors (partition_id, "offset", consumer_group, attempt, error, at)
  select new.partition_id, new."offset", new.consumer_group, v_last + n, new.last_error, coalesce(new.last_failed_at, now())
  from generate_series(1, new.failures - coalesce(case when tg_op = 'UPDATE' then old.failures end, 0)) n;
  if v_last + new.failures > queen.attempt_errors_kept() then
    delete from queen.attempt_errors e
    where e.partition_id = new.partition_id and e."offset" = new."offset" and e.consumer_group = new.consumer_group
      and e.attempt <= v_last + new.failures - queen.attempt_errors_kept();
  end if;
  return null;
end
$$;
create trigger attempts_record_new_failures after insert on queen.message_attempts
for each row when (new.failures > 0) execute function queen.record_attempt_errors();
create trigger attempts_record_more_failures after update of failures on queen.message_attempts
for each row when (new.failures > old.failures) execute function queen.record_attempt_errors();

-- The history goes with its message whichever path deletes it (the lifecycle job, deleting one
-- message); one statement per deleting statement, as traces go (014).
create function queen.drop_attempt_errors_of_deleted_messages() returns trigger
language plpgsql as $$
begin
  delete from queen.attempt_errors e using gone g where e.partition_id = g.partition_id and e."offset" = g."offset";
  return null;
end
$$;
create trigger messages_take_their_attempt_errors after delete on queen.messages
referencing old table as gone for each statement execute function queen.drop_attempt_errors_of_deleted_messages();

-- The dead letters of p_items ([{partitionId, consumerGroup, offset}], index order), locked, with
-- their messages; an item with no dead letter comes back with nulls.
create function queen.locked_dead_letters(p_items jsonb)
returns table (idx integer, partition_id uuid, consumer_group text, "offset" bigint, found boolean, queue_name text,
               partition_name text, transaction_id text, payload jsonb, encrypted boolean, producer_sub text,
               trace_id text, error_message text, retry_count integer)
language sql as $$
  with items as (
    select (t.ord - 1)::integer as idx, (t.e->>'partitionId')::uuid as pid, t.e->>'consumerGroup' as grp,
           (t.e->>'offset')::bigint as off
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
  ),
  locked as (
    select d.partition_id, d.consumer_group, d."offset", d.error_message, d.retry_count
    from queen.dead_letters d
    where (d.partition_id, d.consumer_group, d."offset") in (select i.pid, i.grp, i.off from items i)
    order by d.partition_id, d.consumer_group, d."offset"
    for update
  )
  select i.idx, i.pid, i.grp, i.off, m.partition_id is not null, q.name, p.name, m.transaction_id, m.payload,
         m.encrypted, m.producer_sub, m.trace_id, l.error_message, l.retry_count
  from items i
  left join locked l on l.partition_id = i.pid and l.consumer_group = i.grp and l."offset" = i.off
  left join queen.messages m on m.partition_id = l.partition_id and m."offset" = l."offset"
  left join queen.partitions p on p.id = m.partition_id
  left join queen.queues q on q.id = p.queue_id
  order by i.idx
$$;

-- The live view: one event per queue an operator's requeue or discard touched, naming its first
-- ten messages (p_results: the answers of the functions below).
create function queen.emit_dead_letter_event(p_type text, p_results jsonb, p_reason text, p_actor text) returns void
language sql as $$
  select queen.emit(jsonb_build_object('type', p_type, 'queue', r->>'queue', 'actor', p_actor, 'reason', p_reason,
           'count', count(*), 'items', jsonb_path_query_array(jsonb_agg(
             jsonb_build_object('partition', r->>'partition', 'partitionId', r->>'partitionId', 'group', r->>'consumerGroup',
                                'offset', (r->>'offset')::bigint, 'transactionId', r->>'transactionId',
                                'newTransactionId', r->>'newTransactionId') order by (r->>'offset')::bigint), '$[0 to 9]')))
  from jsonb_array_elements(p_results) r
  where (r->>'success')::boolean
  group by r->>'queue'
$$;

-- Requeue: each dead-lettered message goes back to its partition as a new message (same payload,
-- trace id and producer; transaction id `<original>.requeue-<n>`, the first n free in the
-- partition; a requeued copy requeued again gets a suffix of its own, so the id names its parent),
-- pushed by queen.push() like any other, so every group consuming the partition
-- receives it. Several items of one message (several groups) make one new message. The dead
-- letters go; the original stays done for its group. One audit row per item. Answers one entry
-- per item, in order: {index, partitionId, consumerGroup, offset, success, error, queue,
-- partition, transactionId, newTransactionId, newMessageId}.
create function queen.requeue_dead_letters(p_items jsonb, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_rows jsonb;
  v_copies jsonb := '[]';
  v_message record;
  v_base text;
  v_n integer;
  v_pushed jsonb;
begin
  select coalesce(jsonb_agg(to_jsonb(d) order by d.idx), '[]') into v_rows from queen.locked_dead_letters(p_items) d;

  for v_message in
    select distinct on (r->>'partition_id', r->>'offset') r
    from jsonb_array_elements(v_rows) r where (r->>'found')::boolean
    order by r->>'partition_id', r->>'offset'
  loop
    v_base := v_message.r->>'transaction_id';
    v_n := 1;
    while exists (select 1 from queen.messages m
                  where m.transaction_id = v_base || '.requeue-' || v_n and m.partition_id = (v_message.r->>'partition_id')::uuid) loop
      v_n := v_n + 1;
    end loop;
    v_copies := v_copies || jsonb_build_object(
      'partitionId', v_message.r->>'partition_id', 'offset', (v_message.r->>'offset')::bigint,
      'queue', v_message.r->>'queue_name', 'partition', v_message.r->>'partition_name',
      'payload', v_message.r->'payload', 'encrypted', (v_message.r->>'encrypted')::boolean,
      'producerSub', v_message.r->>'producer_sub', 'traceId', v_message.r->>'trace_id',
      'transactionId', v_base || '.requeue-' || v_n, 'messageId', queen.uuidv7());
  end loop;

  if jsonb_array_length(v_copies) > 0 then
    -- raises (and so undoes everything) when a queue's maxSize refuses the copies
    perform 1 from queen.push(v_copies);
    select jsonb_agg(c || jsonb_build_object('newOffset', m."offset")) into v_pushed
    from jsonb_array_elements(v_copies) c
    join queen.messages m on m.transaction_id = c->>'transactionId' and m.partition_id = (c->>'partitionId')::uuid;
  end if;

  delete from queen.dead_letters d
  using jsonb_array_elements(v_rows) r
  where (r->>'found')::boolean and d.partition_id = (r->>'partition_id')::uuid
    and d.consumer_group = r->>'consumer_group' and d."offset" = (r->>'offset')::bigint;

  select coalesce(jsonb_agg(jsonb_build_object(
           'index', (r->>'idx')::integer, 'partitionId', r->>'partition_id', 'consumerGroup', r->>'consumer_group',
           'offset', (r->>'offset')::bigint, 'success', (r->>'found')::boolean,
           'error', case when not (r->>'found')::boolean then 'Dead letter not found' end,
           'queue', r->>'queue_name', 'partition', r->>'partition_name', 'transactionId', r->>'transaction_id',
           'newTransactionId', c->>'transactionId', 'newMessageId', c->>'messageId', 'newOffset', (c->>'newOffset')::bigint)
           order by (r->>'idx')::integer), '[]')
  into v_rows
  from jsonb_array_elements(v_rows) r
  left join jsonb_array_elements(v_pushed) c
    on (r->>'found')::boolean and c->>'partitionId' = r->>'partition_id' and (c->>'offset')::bigint = (r->>'offset')::bigint;

  perform queen.emit_dead_letter_event('requeue', v_rows, p_reason, p_actor);
  perform queen.audit(p_actor, 'dlq.requeue', 'message', (r->>'partitionId') || '/' || (r->>'transactionId'), p_reason, 'requeued',
                      (r - 'index' - 'success' - 'error') || jsonb_build_object('group', r->>'consumerGroup'))
  from jsonb_array_elements(v_rows) r where (r->>'success')::boolean;
  return v_rows;
end
$$;

-- Discard: the dead letters go; their messages stay done for their groups. One audit row per
-- item, with the error and attempt count that are gone with it. Answers one entry per item, in
-- order: {index, partitionId, consumerGroup, offset, success, error, queue, partition, transactionId}.
create function queen.discard_dead_letters(p_items jsonb, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_rows jsonb;
begin
  select coalesce(jsonb_agg(to_jsonb(d) order by d.idx), '[]') into v_rows from queen.locked_dead_letters(p_items) d;

  delete from queen.dead_letters d
  using jsonb_array_elements(v_rows) r
  where (r->>'found')::boolean and d.partition_id = (r->>'partition_id')::uuid
    and d.consumer_group = r->>'consumer_group' and d."offset" = (r->>'offset')::bigint;

  perform queen.emit_dead_letter_event('discard', (
    select jsonb_agg(jsonb_build_object('success', (r->>'found')::boolean, 'queue', r->>'queue_name', 'partition', r->>'partition_name',
                                        'partitionId', r->>'partition_id', 'consumerGroup', r->>'consumer_group',
                                        'offset', (r->>'offset')::bigint, 'transactionId', r->>'transaction_id'))
    from jsonb_array_elements(v_rows) r), p_reason, p_actor);
  perform queen.audit(p_actor, 'dlq.discard', 'message', (r->>'partition_id') || '/' || (r->>'transaction_id'), p_reason, 'discarded',
                      jsonb_build_object('queue', r->>'queue_name', 'partition', r->>'partition_name', 'partitionId', r->>'partition_id',
                                         'group', r->>'consumer_group', 'offset', (r->>'offset')::bigint,
                                         'transactionId', r->>'transaction_id', 'error', r->>'error_message',
                                         'retryCount', (r->>'retry_count')::integer))
  from jsonb_array_elements(v_rows) r where (r->>'found')::boolean;

  return (select coalesce(jsonb_agg(jsonb_build_object(
            'index', (r->>'idx')::integer, 'partitionId', r->>'partition_id', 'consumerGroup', r->>'consumer_group',
            'offset', (r->>'offset')::bigint, 'success', (r->>'found')::boolean,
            'error', case when not (r->>'found')::boolean then 'Dead letter not found' end,
            'queue', r->>'queue_name', 'partition', r->>'partition_name', 'transactionId', r->>'transaction_id')
            order by (r->>'idx')::integer), '[]')
          from jsonb_array_elements(v_rows) r);
end
$$;
