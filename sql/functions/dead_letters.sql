-- A message that fails forever would otherwise grow its history without end.
create or replace function queen.attempt_errors_kept() returns integer
language sql immutable as $$ select 100 $$;

-- Filled from queen.message_attempts, which queen.ack() (owned elsewhere, redefined in later
-- migrations) writes: whenever `failures` grows, each new failure becomes an attempt row carrying
-- the error that came with it. Attempts are numbered on from the last one recorded, so a seek that
-- resets the attempt counts continues the history rather than colliding with it.
create or replace function queen.record_attempt_errors() returns trigger
language plpgsql as $$
declare
  v_last integer;
  v_added integer := new.failures - coalesce(case when tg_op = 'UPDATE' then old.failures end, 0);
begin
  select coalesce(max(e.attempt), 0) into v_last from queen.attempt_errors e
  where e.partition_id = new.partition_id and e."offset" = new."offset" and e.consumer_group = new.consumer_group;
  insert into queen.attempt_errors (partition_id, "offset", consumer_group, attempt, error, at)
  select new.partition_id, new."offset", new.consumer_group, v_last + n, new.last_error, coalesce(new.last_failed_at, now())
  from generate_series(greatest(1, v_added - queen.attempt_errors_kept() + 1), v_added) n;
  if v_last + v_added > queen.attempt_errors_kept() then
    delete from queen.attempt_errors e
    where e.partition_id = new.partition_id and e."offset" = new."offset" and e.consumer_group = new.consumer_group
      and e.attempt <= v_last + v_added - queen.attempt_errors_kept();
  end if;
  return null;
end
$$;

-- Deletes the dead letters of p_items ([{partitionId, consumerGroup, offset}]) and answers each
-- item, in order, with what went: {index, partitionId, consumerGroup, offset, success, error,
-- queue, partition, transactionId, lastError, retryCount} and, under `message`, the message's
-- payload, encryption, producer and trace id (from the copy the dead letter kept when the message
-- was removed). An item with no dead letter (never, or already requeued or discarded by a
-- concurrent call, which the delete waits for) is success:false; so is, with p_with_message, one
-- whose message is gone with no copy (removed before copies were kept): its dead letter stays (a
-- requeue has nothing to push; a discard removes it).
create or replace function queen.take_dead_letters(p_items jsonb, p_with_message boolean) returns jsonb
language sql as $$
  with items as (
    select (t.ord - 1)::integer as idx, (t.e->>'partitionId')::uuid as pid, t.e->>'consumerGroup' as grp,
           (t.e->>'offset')::bigint as off
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
  ),
  gone as (
    delete from queen.dead_letters d using items i
    where d.partition_id = i.pid and d.consumer_group = i.grp and d."offset" = i.off
      and (not p_with_message or d.payload is not null
           or exists (select 1 from queen.messages m where m.partition_id = d.partition_id and m."offset" = d."offset"))
    returning d.*
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'index', i.idx, 'partitionId', i.pid, 'consumerGroup', i.grp, 'offset', i.off, 'success', g.partition_id is not null,
           'error', case when g.partition_id is not null then null
                         when p_with_message and exists (select 1 from queen.dead_letters d where d.partition_id = i.pid and d.consumer_group = i.grp and d."offset" = i.off)
                           then 'Message no longer exists'
                         else 'Dead letter not found' end,
           'queue', q.name, 'partition', p.name, 'transactionId', coalesce(m.transaction_id, g.transaction_id),
           'lastError', g.error_message, 'retryCount', g.retry_count,
           -- the message, or the copy its dead letter kept when the message was removed
           'message', case when m.partition_id is not null then jsonb_build_object(
               'payload', m.payload, 'encrypted', m.encrypted, 'producerSub', m.producer_sub, 'traceId', m.trace_id)
             when g.payload is not null then jsonb_build_object(
               'payload', g.payload, 'encrypted', g.encrypted, 'producerSub', g.producer_sub, 'traceId', g.trace_id) end)
           order by i.idx), '[]')
  from items i
  left join gone g on g.partition_id = i.pid and g.consumer_group = i.grp and g."offset" = i.off
  left join queen.messages m on m.partition_id = g.partition_id and m."offset" = g."offset"
  left join queen.partitions p on p.id = g.partition_id
  left join queen.queues q on q.id = p.queue_id
$$;

-- What an operator's requeue or discard did: one audit row per operator action (issue 34, as a
-- bulk lease release). One dead letter that went: target the message (as message.delete's, or
-- `<partition>/@<offset>` for a dead letter whose message is gone), the item's context in details.
-- Several: target `N dead letters` (type dead_letters), details with `deadLetters` (how many),
-- `queues` (and `queue`, `group` when one) and every dead letter that went (at most
-- queen.audit_partitions_limit() listed) under `partitions`, each with its item's context, so the
-- audit filters by queue, partition and group find the row. And for the live view one event per
-- queue naming its first ten messages.
create or replace function queen.record_dead_letter_action(p_action text, p_results jsonb, p_reason text, p_actor text) returns void
language plpgsql as $$
declare
  v_went jsonb := (select coalesce(jsonb_agg(jsonb_strip_nulls(r - 'index' - 'success' - 'error' - 'consumerGroup' - 'message')
                                             || jsonb_build_object('group', r->>'consumerGroup') order by (r->>'index')::integer), '[]')
                   from jsonb_array_elements(p_results) r where (r->>'success')::boolean);
  v_n integer := jsonb_array_length(v_went);
  v_result text := case p_action when 'requeue' then 'requeued' else 'discarded' end;
begin
  if v_n = 1 then
    perform queen.audit(p_actor, 'dlq.' || p_action, 'message',
                        (v_went->0->>'partitionId') || '/' || coalesce(v_went->0->>'transactionId', '@' || (v_went->0->>'offset')),
                        p_reason, v_result, v_went->0);
  elsif v_n > 1 then
    perform queen.audit(p_actor, 'dlq.' || p_action, 'dead_letters', v_n || ' dead letters', p_reason, v_result,
      jsonb_strip_nulls(jsonb_build_object(
        'deadLetters', v_n,
        'queues', (select jsonb_agg(distinct w->>'queue') from jsonb_array_elements(v_went) w),
        'queue', case when (select count(distinct w->>'queue') from jsonb_array_elements(v_went) w) = 1 then v_went->0->>'queue' end,
        'group', case when (select count(distinct w->>'group') from jsonb_array_elements(v_went) w) = 1 then v_went->0->>'group' end,
        'partitions', (select jsonb_agg(w) from (select w from jsonb_array_elements(v_went) w
                                                 limit queen.audit_partitions_limit()) x(w)))));
  end if;
  -- `groups` (and `group` when one: it survives the truncation of a long event) for the live
  -- view's group filter
  perform queen.emit(case when count(distinct r->>'consumerGroup') = 1 then jsonb_build_object('group', min(r->>'consumerGroup')) else '{}' end
          || jsonb_build_object('type', p_action, 'queue', r->>'queue', 'actor', p_actor, 'reason', p_reason,
            'groups', to_jsonb(array_agg(distinct r->>'consumerGroup')),
            'count', count(*), 'items', jsonb_path_query_array(jsonb_agg(
              jsonb_build_object('partition', r->>'partition', 'partitionId', r->>'partitionId', 'group', r->>'consumerGroup',
                                 'offset', (r->>'offset')::bigint, 'transactionId', r->>'transactionId',
                                 'newTransactionId', r->>'newTransactionId') order by (r->>'offset')::bigint), '$[0 to 9]')))
  from jsonb_array_elements(p_results) r
  where (r->>'success')::boolean
  group by r->>'queue';
end
$$;

-- Requeue, for the groups that failed only (issue 34): each dead-lettered message goes back to its
-- partition as a new message (same payload, trace id and producer; transaction id
-- `<original>.requeue-<n>`, the first n free in the partition, or a fresh UUID when that would pass
-- 512 bytes; a copy requeued again gets a suffix of its own, so an id names its parent), pushed by
-- queen.push() like any other, and in the same transaction counted as done for every other group
-- with a cursor on the partition (as a set-aside counts a message done: into the cursor's done
-- offsets, the cursor passing it when contiguous), so only the groups whose dead letters are
-- requeued receive it. Several items of one message (several groups) make one new message, which
-- each of those groups receives. The dead letters go; the original stays done for its group.
-- Answers queen.take_dead_letters()'s entries without `message`, plus newTransactionId,
-- newMessageId, newOffset and `doneFor` (the other groups the copy was counted done for).
create or replace function queen.requeue_dead_letters(p_items jsonb, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_partitions uuid[] := array(select distinct (e->>'partitionId')::uuid from jsonb_array_elements(p_items) e);
  v_rows jsonb;
  v_copies jsonb := '[]';
  v_moved jsonb;
  v_message jsonb;
  v_n integer;
  v_id text;
begin
  -- The locks queen.push() takes below, first and in its order (queues, then partitions by id):
  -- deleting a message (or the lifecycle job) holds its partition and then deletes its dead
  -- letters, so holding a dead letter before the partition could deadlock with it.
  perform 1 from queen.queues q where q.id in (select p.queue_id from queen.partitions p where p.id = any (v_partitions))
  order by q.id for key share;
  perform 1 from queen.partitions p where p.id = any (v_partitions) order by p.id for no key update;
  -- then their cursors, in (partition, group) order as queen.delete_message takes them: the other
  -- groups' cursors are moved below, after queen.push() has written the backlog rows an ack writes
  -- after its cursor
  perform 1 from queen.cursors c where c.partition_id = any (v_partitions)
  order by c.partition_id, c.consumer_group for update;
  v_rows := queen.take_dead_letters(p_items, true);

  for v_message in
    select distinct on (r->>'partitionId', r->>'offset') r
    from jsonb_array_elements(v_rows) r where (r->>'success')::boolean and r->'message' <> 'null'
    order by r->>'partitionId', r->>'offset'
  loop
    v_n := 1;
    -- free: neither stored nor remembered by the dedup window (a copy requeued earlier and
    -- removed since would make queen.push() call this one a duplicate and push nothing)
    while exists (select 1 from queen.messages m
                  where m.transaction_id = (v_message->>'transactionId') || '.requeue-' || v_n
                    and m.partition_id = (v_message->>'partitionId')::uuid)
       or exists (select 1 from queen.removed_transactions r
                  where r.transaction_id = (v_message->>'transactionId') || '.requeue-' || v_n
                    and r.partition_id = (v_message->>'partitionId')::uuid and r.forget_at > now()) loop
      v_n := v_n + 1;
    end loop;
    v_id := (v_message->>'transactionId') || '.requeue-' || v_n;
    -- past the 512-byte name limit acks would refuse the copy forever: a fresh id instead (the
    -- audit row keeps the original beside it)
    if octet_length(v_id) > 512 then
      v_id := queen.uuidv7()::text;
    end if;
    v_copies := v_copies || (v_message->'message' || jsonb_build_object(
      'partitionId', v_message->>'partitionId', 'offset', (v_message->>'offset')::bigint,
      'queue', v_message->>'queue', 'partition', v_message->>'partition',
      'transactionId', v_id));
  end loop;

  if jsonb_array_length(v_copies) > 0 then
    -- raises (and so undoes everything) when a queue's maxSize refuses the copies
    perform 1 from queen.push(p_items => v_copies);
  end if;

  -- each copy with its new offset and the groups it is for (those whose dead letters of the
  -- original went in this call)
  select coalesce(jsonb_agg(c || jsonb_build_object('newOffset', m."offset", 'newMessageId', m.id,
           'groups', (select jsonb_agg(distinct r->>'consumerGroup') from jsonb_array_elements(v_rows) r
                      where (r->>'success')::boolean and r->>'partitionId' = c->>'partitionId'
                        and (r->>'offset')::bigint = (c->>'offset')::bigint))), '[]')
  into v_copies
  from jsonb_array_elements(v_copies) c
  join queen.messages m on m.transaction_id = c->>'transactionId' and m.partition_id = (c->>'partitionId')::uuid;

  -- every other group counts the copy as done
  with other as (
    select c.partition_id, c.consumer_group, c.queue_id, c.committed_offset as old_committed,
           (cp->>'newOffset')::bigint as new_offset, cp->>'partitionId' || '/' || (cp->>'offset') as copy_of
    from jsonb_array_elements(v_copies) cp
    join queen.cursors c on c.partition_id = (cp->>'partitionId')::uuid
    where not (cp->'groups' ? c.consumer_group)
  ),
  merged as (
    -- several copies in one partition: each cursor once, with all of them
    select o.partition_id, o.consumer_group, o.queue_id, o.old_committed, array_agg(o.new_offset) as offsets,
           jsonb_agg(o.copy_of) as copies
    from other o group by o.partition_id, o.consumer_group, o.queue_id, o.old_committed
  ),
  moved as (
    update queen.cursors c set committed_offset = pa.committed, acked_offsets = pa.done
    from merged g
    cross join lateral queen.passed(g.partition_id, g.old_committed,
                                    (select c2.acked_offsets from queen.cursors c2
                                     where c2.partition_id = g.partition_id and c2.consumer_group = g.consumer_group)
                                    || g.offsets) pa
    where c.partition_id = g.partition_id and c.consumer_group = g.consumer_group
    returning c.partition_id, c.consumer_group, c.queue_id, pa.committed - g.old_committed as committed, g.copies
  )
  select coalesce(jsonb_agg(to_jsonb(moved)), '[]') into v_moved from moved;
  if jsonb_array_length(v_moved) > 0 then
    perform queen.follow_cursors(x.pid) from (select distinct (m->>'partition_id')::uuid as pid
                                              from jsonb_array_elements(v_moved) m order by 1) x;
    perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', m->>'queue_id', 'group', m->>'consumer_group',
              'committed', (m->>'committed')::bigint)))
    from jsonb_array_elements(v_moved) m;
  end if;

  select jsonb_agg((r - 'message') || jsonb_build_object(
           'newTransactionId', c->>'transactionId', 'newMessageId', c->>'newMessageId', 'newOffset', (c->>'newOffset')::bigint,
           'doneFor', case when c is not null then
             coalesce((select jsonb_agg(m->>'consumer_group' order by m->>'consumer_group') from jsonb_array_elements(v_moved) m
                       where m->>'partition_id' = r->>'partitionId'
                         and m->'copies' ? ((r->>'partitionId') || '/' || (r->>'offset'))), '[]') end)
         order by (r->>'index')::integer)
  into v_rows
  from jsonb_array_elements(v_rows) r
  left join jsonb_array_elements(v_copies) c
    on c->>'partitionId' = r->>'partitionId' and (c->>'offset')::bigint = (r->>'offset')::bigint;

  perform queen.record_dead_letter_action('requeue', v_rows, p_reason, p_actor);
  return coalesce(v_rows, '[]');
end
$$;

-- Discard: the dead letters go; their messages stay done for their groups. Answers
-- queen.take_dead_letters()'s entries without `message`.
create or replace function queen.discard_dead_letters(p_items jsonb, p_reason text, p_actor text)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_rows jsonb := (select coalesce(jsonb_agg(r - 'message' order by (r->>'index')::integer), '[]')
                   from jsonb_array_elements(queen.take_dead_letters(p_items, false)) r);
begin
  perform queen.record_dead_letter_action('discard', v_rows, p_reason, p_actor);
  return v_rows;
end
$$;
