-- The Streams API (spec/streams.md): register a query, read its state, commit a cycle.

-- Registrations of one name are serialized by the name's unique index and the row lock: of two
-- racing first registrations one inserts (fresh), the other waits and is judged against its hash.
-- A reset through registration (another hash, reset:true) is audited as streams.reset, as the
-- operator's reset is, with p_actor and via = registration.
create or replace function queen_streams.register(p_name text, p_source text, p_sink text, p_hash text, p_reset boolean,
                                                  p_actor text)
returns table (query_id uuid, fresh boolean, reset boolean, conflict boolean)
language plpgsql as $$
#variable_conflict use_column
declare
  v queen_streams.queries;
  v_shards bigint;
  v_rows bigint;
begin
  for attempt in 1..3 loop
    insert into queen_streams.queries (id, name, source_queue, sink_queue, config_hash)
    values (queen.uuidv7(), p_name, p_source, p_sink, p_hash)
    on conflict (name) do nothing
    returning * into v;
    if v.id is not null then
      return query select v.id, true, false, false;
      return;
    end if;
    select * into v from queen_streams.queries q where q.name = p_name for update;
    exit when v.id is not null; -- else deleted since the insert looked: insert again
  end loop;
  if v.config_hash = p_hash then
    update queen_streams.queries q set source_queue = p_source, sink_queue = p_sink, updated_at = now() where q.id = v.id;
    return query select v.id, false, false, false;
  elsif p_reset then
    select count(*) into v_shards from queen_streams.shards s where s.query_id = v.id and s.state_keys > 0;
    v_rows := queen_streams.drop_state(v.id);
    update queen_streams.queries q set source_queue = p_source, sink_queue = p_sink, config_hash = p_hash, updated_at = now()
    where q.id = v.id;
    perform queen.audit(p_actor, 'streams.reset', 'streaming-query', v.name, null, 'reset',
      jsonb_build_object('queryId', v.id, 'query', v.name, 'via', 'registration', 'queue', p_source, 'sinkQueue', p_sink,
                         'configHash', p_hash, 'previousConfigHash', v.config_hash,
                         'previousQueue', v.source_queue, 'rowsDeleted', v_rows, 'shards', v_shards));
    return query select v.id, false, true, false;
  else
    return query select v.id, false, false, true;
  end if;
end
$$;

-- Every state row of a query, every partition; its shards' figures follow. Callers hold the query row.
create or replace function queen_streams.drop_state(p_query uuid) returns bigint
language plpgsql as $$
declare
  v_rows bigint;
begin
  delete from queen_streams.state s where s.query_id = p_query;
  get diagnostics v_rows = row_count;
  update queen_streams.shards s set state_keys = 0, state_bytes = 0 where s.query_id = p_query and (s.state_keys <> 0 or s.state_bytes <> 0);
  return v_rows;
end
$$;

-- The operator's reset (dashboard): drops the query's state, audited. Null when there is no such query.
create or replace function queen_streams.reset_state(p_query uuid, p_reason text, p_actor text) returns jsonb
language plpgsql as $$
declare
  v queen_streams.queries;
  v_shards bigint;
  v_rows bigint;
  v_details jsonb;
begin
  select * into v from queen_streams.queries q where q.id = p_query for update;
  if v.id is null then
    return null;
  end if;
  select count(*) into v_shards from queen_streams.shards s where s.query_id = p_query and s.state_keys > 0;
  v_rows := queen_streams.drop_state(p_query);
  update queen_streams.queries q set updated_at = now() where q.id = p_query;
  v_details := jsonb_build_object('queryId', v.id, 'query', v.name, 'queue', v.source_queue, 'sinkQueue', v.sink_queue,
                                  'configHash', v.config_hash, 'rowsDeleted', v_rows, 'shards', v_shards);
  perform queen.audit(p_actor, 'streams.reset', 'streaming-query', v.name, p_reason, 'reset', v_details);
  return v_details;
end
$$;

-- Committed state of one shard, filtered (AND): keys, a literal prefix, ripeness (an object
-- whose windowEnd is a JSON number at or before p_ripe). Rows in byte order of key, as JSON text.
-- Given keys, each is one probe of the key index (a lateral LIMIT 1, so no plan can turn it into
-- a walk of the shard filtered by the list, which cost 10,000 x 200,000 comparisons); given a
-- prefix, a walk of the keys that start with it (a key is at most 1,024 bytes, and U+10FFFF is the
-- greatest character, so no key that starts with the prefix sorts after the prefix followed by 256
-- of it). Planned with parameters (a SQL function): the branches not taken stop at their
-- one-time filter.
create or replace function queen_streams.state_get(p_query uuid, p_partition uuid, p_keys text[], p_prefix text, p_ripe numeric)
returns text
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object('key', s.key, 'value', s.value, 'updated_at', queen.iso(s.updated_at))
                            order by s.key), '[]')::text
  from (
    select x.key, x.value, x.updated_at
    from (select distinct k from unnest(p_keys) k) k
    cross join lateral (select s.key, s.value, s.updated_at from queen_streams.state s
                        where s.query_id = p_query and s.partition_id = p_partition and s.key = k.k limit 1) x
    where p_keys is not null
    union all
    select s.key, s.value, s.updated_at from queen_streams.state s
    where p_keys is null and p_prefix is not null
      and s.query_id = p_query and s.partition_id = p_partition
      and s.key >= p_prefix and s.key <= p_prefix || repeat(chr(1114111), 256)
    union all
    select s.key, s.value, s.updated_at from queen_streams.state s
    where p_keys is null and p_prefix is null and s.query_id = p_query and s.partition_id = p_partition
  ) s
  where (p_prefix is null or starts_with(s.key, p_prefix))
    and (p_ripe is null or (jsonb_typeof(s.value) = 'object' and jsonb_typeof(s.value->'windowEnd') = 'number'
                            and (s.value->>'windowEnd')::numeric <= p_ripe))
$$;

-- A refused cycle: raises QS001 with the reason; the detail carries the source partition's queue.
create or replace function queen_streams.refuse(p_reason text, p_queue text) returns void
language plpgsql as $$
begin
  raise exception '%', p_reason using errcode = 'QS001', detail = coalesce(p_queue, '');
end
$$;

-- One cycle, one transaction (this statement): lock the shard, apply the state ops (the last op
-- on a key wins), push the sink items through queen.push() (items prepared and encrypted by the
-- caller), then the ack, fenced by the cursor's live lease. An ack-less cycle (the idle flush) of
-- a shard its group consumes is fenced too: refused while that group's lease is live, or when it
-- deletes a key no longer stored. Any refusal raises and undoes it all.
-- Locks: query row (share; a reset registration takes it exclusively), shard row, cursor, then the
-- sink's queues and partitions in queen.push()'s order. A partition that is not its source
-- queue's raises QS002 (a 400 naming partition_id).
create or replace function queen_streams.cycle(p_query uuid, p_partition uuid, p_group text, p_ops jsonb, p_items jsonb,
                                               p_ack jsonb, p_release boolean)
returns jsonb
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue text;
  v_source text;
  v_cursor queen.cursors;
  v_off bigint;
  v_failed boolean;
  v_error text;
  v_committed bigint;
  v_done bigint[];
  v_count bigint;
  v_failures integer;
  v_released boolean;
  v_head bigint;
  v_keys bigint := 0;
  v_bytes bigint := 0;
  v_missing bigint := 0;
  v_push jsonb := '[]';
  v_ack jsonb;
begin
  select q.name into v_queue from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = p_partition;
  select q.source_queue into v_source from queen_streams.queries q where q.id = p_query for share;
  if not found then
    perform queen_streams.refuse('Query not found', v_queue);
  end if;
  -- A cycle belongs to a partition of its query's source queue, or to a shard the query already
  -- has (its partition since deleted: state outlives it); never to another queue's partition or
  -- to an id that names nothing (a shard row made up by the caller).
  if v_queue is distinct from v_source
     and (v_queue is not null
          or not exists (select 1 from queen_streams.shards s where s.query_id = p_query and s.partition_id = p_partition)) then
    raise exception 'partition_id: not a partition of the query''s source queue %', to_json(v_source)::text
      using errcode = 'QS002';
  end if;
  insert into queen_streams.shards (query_id, partition_id) values (p_query, p_partition) on conflict do nothing;
  perform 1 from queen_streams.shards s where s.query_id = p_query and s.partition_id = p_partition for update;
  if p_ack is not null then
    select * into v_cursor from queen.cursors c where c.partition_id = p_partition and c.consumer_group = p_group for update;
  else
    -- An ack-less cycle (the SDKs' idle flush: deletes of the ripe windows it has just read, and
    -- their sink pushes) of a shard its group consumes is fenced by that group's cursor. While a
    -- lease is live a batch is in flight whose cycle reads and closes the same windows: a flush
    -- committed now would emit a window that cycle emits again (or lose what it adds), so it is
    -- refused and the SDK flushes at its next tick. Held (share) until commit, so that a claim
    -- running now is seen, and one starting now waits for this commit (claims skip a locked
    -- cursor and try again shortly): the batch it claims reads the state this flush leaves.
    select * into v_cursor from queen.cursors c where c.partition_id = p_partition and c.consumer_group = p_group for share;
    if v_cursor.lease_id is not null and v_cursor.lease_expires_at > now() then
      perform queen_streams.refuse('Source batch in flight', v_queue);
    end if;
  end if;

  if jsonb_array_length(p_ops) > 0 then
    with ops as (
      select distinct on (t.e->>'key') t.e->>'key' as key, t.e->>'type' as type, t.e->'value' as value
      from jsonb_array_elements(p_ops) with ordinality as t(e, ord)
      order by t.e->>'key', t.ord desc
    ),
    -- each op's stored row, one probe of the key index per key (a lateral LIMIT 1: see state_get)
    old as (
      select o.key, o.type, x.ctid, x.bytes
      from ops o
      cross join lateral (select s.ctid, octet_length(s.key) + octet_length(s.value::text) as bytes
                          from queen_streams.state s
                          where s.query_id = p_query and s.partition_id = p_partition and s.key = o.key limit 1) x
    ),
    deleted as (
      delete from queen_streams.state s
      -- by the rows' addresses found above (a TID scan: no other plan is possible)
      where s.ctid = any (array(select old.ctid from old where old.type = 'delete'))
    ),
    upserted as (
      insert into queen_streams.state as s (query_id, partition_id, key, value, updated_at)
      select p_query, p_partition, o.key, o.value, now() from ops o where o.type = 'upsert'
      on conflict (query_id, partition_id, key) do update set value = excluded.value, updated_at = excluded.updated_at
    )
    select (select count(*) from ops o where o.type = 'upsert') - (select count(*) from old),
           coalesce((select sum(octet_length(o.key) + octet_length(o.value::text)) from ops o where o.type = 'upsert'), 0)
             - coalesce((select sum(old.bytes) from old), 0),
           (select count(*) from ops o where o.type = 'delete') - (select count(*) from old where old.type = 'delete')
    into v_keys, v_bytes, v_missing;
    -- ... and a flush that deletes a key no longer stored read it before another cycle closed that
    -- window and emitted it: its own emission would be a second one
    if p_ack is null and v_cursor.partition_id is not null and v_missing > 0 then
      perform queen_streams.refuse('State changed since read', v_queue);
    end if;
  end if;

  if jsonb_array_length(p_items) > 0 then
    select jsonb_agg(to_jsonb(r) order by r.idx) into v_push from queen.push(p_items => p_items) r;
  end if;

  if p_ack is not null then
    select m."offset" into v_off from queen.messages m
    where m.transaction_id = p_ack->>'transactionId' and m.partition_id = p_partition;
    if v_off is null then
      perform queen_streams.refuse('Message not found', v_queue);
    end if;
    if v_cursor.partition_id is null or v_cursor.lease_id is null or v_cursor.lease_id <> (p_ack->>'leaseId')::uuid
       or v_cursor.lease_expires_at <= now() then
      perform queen_streams.refuse('Invalid or expired lease', v_queue);
    end if;
    if v_off <= v_cursor.committed_offset then
      perform queen_streams.refuse('Message already acknowledged', v_queue);
    end if;
    if v_off > v_cursor.lease_end_offset then
      perform queen_streams.refuse('Message not in lease', v_queue);
    end if;

    v_failed := p_ack->>'status' = 'failed';
    v_count := v_off - v_cursor.committed_offset
               - (select count(*) from unnest(v_cursor.acked_offsets) x where x > v_cursor.committed_offset and x <= v_off);
    -- every offset up to o is done (o itself dead-lettered when failed); committed then moves on over
    -- done offsets and over offsets whose message is gone (deleted, removed by retention), as every
    -- ack does (queen.passed): a span whose tail is gone is released as by a full ack
    select pa.committed, pa.done into v_committed, v_done from queen.passed(p_partition, v_off, v_cursor.acked_offsets) pa;
    if v_failed then
      -- dead-lettered at once, whatever retryLimit: the SDK has given up on it
      v_error := coalesce(p_ack->>'error', 'Streaming cycle reported failure');
      insert into queen.message_attempts as a (partition_id, consumer_group, "offset", deliveries, failures, last_error, last_failed_at)
      values (p_partition, p_group, v_off, 1, 1, v_error, now())
      on conflict (partition_id, consumer_group, "offset") do update
        set failures = a.failures + 1, last_error = excluded.last_error, last_failed_at = now()
      returning a.failures into v_failures;
      insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
      values (p_partition, p_group, v_off, v_error, v_failures)
      on conflict (partition_id, consumer_group, "offset") do update
        set error_message = excluded.error_message, retry_count = excluded.retry_count, failed_at = now();
      v_released := true;
    else
      v_released := p_release or v_committed >= v_cursor.lease_end_offset;
    end if;

    -- A released lease is no expiry and no failure: the rest of its span is claimable at once.
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
      failures = c.failures + case when v_failed then 1 else 0 end,
      dead_letters = c.dead_letters + case when v_failed then 1 else 0 end,
      last_ack_at = now()
    where c.partition_id = p_partition and c.consumer_group = p_group;

    update queen.backlog b set
      blocked_until = queen.cursor_block(c),
      pending_since = queen.pending_since(c.partition_id, c.committed_offset)
    from queen.cursors c
    where c.partition_id = p_partition and c.consumer_group = p_group
      and b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
    select p.head_offset into v_head from queen.partitions p where p.id = p_partition;
    if v_head <= v_committed then
      perform queen.drop_drained(p_partition, p_group, v_committed);
    end if;
    perform queen.add_group_stats(jsonb_build_array(jsonb_build_object('queue', v_cursor.queue_id, 'group', p_group,
              'committed', v_committed - v_cursor.committed_offset,
              'failures', case when v_failed then 1 else 0 end, 'deadLetters', case when v_failed then 1 else 0 end)));
    perform queen.emit(jsonb_build_object('type', 'ack', 'queue', v_queue,
              'partition', (select p.name from queen.partitions p where p.id = p_partition),
              'partitionId', p_partition, 'group', p_group, 'completed', case when v_failed then v_count - 1 else v_count end,
              'failed', case when v_failed then 1 else 0 end, 'deadLettered', case when v_failed then 1 else 0 end,
              'leaseReleased', v_released, 'streamingQuery', p_query));
    if v_released and v_head > v_committed then
      perform queen.notify_claimable(v_cursor.queue_id);
    end if;
    v_ack := jsonb_build_object('success', true, 'count', v_count, 'lease_released', v_released, 'dlq', v_failed);
  end if;

  update queen_streams.shards s set
    cycles = s.cycles + 1, last_cycle_at = now(),
    consumer_group = case when p_ack is not null then p_group else s.consumer_group end,
    state_keys = s.state_keys + v_keys, state_bytes = s.state_bytes + v_bytes
  where s.query_id = p_query and s.partition_id = p_partition;

  return jsonb_build_object('queueName', v_queue, 'pushResults', v_push, 'ackResult', v_ack);
end
$$;

-- A refused cycle rolled back; its shard counts it (a separate, later transaction).
create or replace function queen_streams.record_refusal(p_query uuid, p_partition uuid, p_reason text) returns void
language sql as $$
  insert into queen_streams.shards as s (query_id, partition_id, refused, last_refused_at, last_refusal)
  select p_query, p_partition, 1, now(), p_reason
  where exists (select 1 from queen_streams.queries q where q.id = p_query)
  on conflict (query_id, partition_id) do update
    set refused = s.refused + 1, last_refused_at = now(), last_refusal = excluded.last_refusal
$$;

-- Per query, from its shards' maintained figures: the metrics' and the dashboard's numbers.
create or replace function queen_streams.figures()
returns table (query_id uuid, name text, cycles bigint, refused bigint, state_keys bigint, state_bytes bigint, partitions bigint,
               last_cycle_at timestamptz)
language sql stable as $$
  select q.id, q.name, coalesce(sum(s.cycles), 0)::bigint, coalesce(sum(s.refused), 0)::bigint,
         coalesce(sum(s.state_keys), 0)::bigint, coalesce(sum(s.state_bytes), 0)::bigint,
         count(s.partition_id) filter (where s.state_keys > 0), max(s.last_cycle_at)
  from queen_streams.queries q
  left join queen_streams.shards s on s.query_id = q.id
  group by q.id
$$;
