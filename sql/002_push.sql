-- Helpers and the push function.

-- UUIDv7: 48-bit Unix milliseconds, then random bits, version 7, variant 10.
create function queen.uuidv7() returns uuid
language sql volatile parallel safe as $$
  select encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
        placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
        from 1 for 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

-- Wire timestamps: UTC, microseconds, literal Z, whatever the session's time zone is.
create function queen.iso(ts timestamptz) returns text
language sql immutable parallel safe as $$
  select to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Notification payloads are limited to 8000 bytes: past that, the per-partition detail goes.
create function queen.bounded(p jsonb) returns text
language sql immutable as $$
  select case when length(p::text) <= 7900 then p::text
              else (p - 'pushed' - 'partitions' || jsonb_build_object('truncated', true))::text end
$$;

-- An event for the live view (every instance LISTENs to queen_events).
create function queen.emit(p_event jsonb) returns void
language sql as $$
  select pg_notify('queen_events', queen.bounded(p_event || jsonb_build_object('at', queen.iso(clock_timestamp()))))
$$;

-- Wakes the pops parked on a queue whose messages became claimable without a push (an ack that
-- released a lease, a resume, a seek).
create function queen.notify_claimable(p_queue uuid) returns void
language sql as $$
  select pg_notify('queen_push', json_build_object('queue', q.name, 'namespace', q.namespace, 'task', q.task)::text)
  from queen.queues q where q.id = p_queue
$$;

-- Implicit queues: namespace = text before the first dot, task = the next dot-separated part.
create function queen.ensure_queues(p_names text[]) returns void
language sql as $$
  insert into queen.queues (id, name, namespace, task)
  select queen.uuidv7(), n, split_part(n, '.', 1), split_part(n, '.', 2)
  from unnest(p_names) as n
  where not exists (select 1 from queen.queues q where q.name = n)
  on conflict (name) do nothing
$$;

-- Push a batch of items: [{queue, partition, payload, transactionId, messageId, producerSub,
-- traceId, encrypted}] in input order. Offsets are assigned under each partition's row lock,
-- to accepted items only; one segment per partition per call (the group commit).
create function queen.push(p_items jsonb)
returns table (idx integer, transaction_id text, status text, message_id uuid, partition_id uuid,
               trace_id text, queue_name text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_queues text[] := array(select distinct e->>'queue' from jsonb_array_elements(p_items) e);
  v_now timestamptz;
  v_attempt integer := 0;
begin
  -- A queue deleted concurrently is created again, as a push after the delete would. Holding a
  -- key-share lock on each queue row keeps queen.delete_queue() out until this push commits.
  loop
    v_attempt := v_attempt + 1;
    perform queen.ensure_queues(v_queues);
    exit when (select count(*) from (select 1 from queen.queues q where q.name = any (v_queues) for key share) l)
              = cardinality(v_queues);
    if v_attempt >= 3 then
      raise exception 'push: queues % keep disappearing', v_queues;
    end if;
  end loop;

  insert into queen.partitions (id, queue_id, name)
  select queen.uuidv7(), q.id, s.p
  from (select distinct e->>'queue' as q, e->>'partition' as p from jsonb_array_elements(p_items) e) s
  join queen.queues q on q.name = s.q
  where not exists (select 1 from queen.partitions x where x.queue_id = q.id and x.name = s.p)
  on conflict (queue_id, name) do nothing;

  -- Lock in id order so that concurrent multi-partition pushes cannot deadlock.
  perform 1
  from queen.partitions p
  join queen.queues q on q.id = p.queue_id
  join (select distinct e->>'queue' as q, e->>'partition' as p from jsonb_array_elements(p_items) e) s
    on s.q = q.name and s.p = p.name
  order by p.id
  for update of p;
  if not found then
    raise exception 'push: partitions not found';
  end if;

  -- The caller encrypts payloads of encrypted queues; its view of which queues those are may be
  -- stale right after a configure. Refuse rather than store plaintext: it retries with fresh flags.
  if exists (
    select 1 from jsonb_array_elements(p_items) e join queen.queues q on q.name = e->>'queue'
    where q.encryption_enabled and not coalesce((e->>'encrypted')::boolean, false))
  then
    raise exception 'push: an item for an encrypted queue is not encrypted' using errcode = 'QM003';
  end if;

  v_now := clock_timestamp();

  return query
  with items as (
    select (t.ord - 1)::integer as idx, q.name as queue_name, q.namespace, q.task,
           p.id as pid, p.head_offset,
           t.e->>'transactionId' as txid, (t.e->>'messageId')::uuid as mid,
           t.e->'payload' as payload, coalesce((t.e->>'encrypted')::boolean, false) as encrypted,
           t.e->>'producerSub' as producer_sub, t.e->>'traceId' as trace_id
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
    join queen.queues q on q.name = t.e->>'queue'
    join queen.partitions p on p.queue_id = q.id and p.name = t.e->>'partition'
  ),
  -- Looked up by transaction id alone so that only the (transaction_id, partition_id) index
  -- fits, whatever the planner's statistics say about a young table.
  stored as materialized (
    select m.partition_id, m.transaction_id, m.id
    from queen.messages m
    where m.transaction_id = any (array(select distinct i.txid from items i))
  ),
  judged as (
    select i.*, s.id as stored_id,
           first_value(i.idx) over w as first_idx, first_value(i.mid) over w as first_mid
    from items i
    left join stored s on s.partition_id = i.pid and s.transaction_id = i.txid
    window w as (partition by i.pid, i.txid order by i.idx)
  ),
  accepted as (
    select j.*, j.head_offset + row_number() over (partition by j.pid order by j.idx) as off
    from judged j
    where j.stored_id is null and j.first_idx = j.idx
  ),
  new_segments as (
    insert into queen.segments (partition_id, first_offset, last_offset, created_at)
    select a.pid, min(a.off), max(a.off), v_now from accepted a group by a.pid
  ),
  new_messages as (
    insert into queen.messages (partition_id, "offset", id, transaction_id, trace_id, payload,
                                encrypted, producer_sub, segment_offset)
    select a.pid, a.off, a.mid, a.txid, a.trace_id, a.payload, a.encrypted, a.producer_sub,
           a.head_offset + 1
    from accepted a
  ),
  heads as (
    update queen.partitions p
    set head_offset = h.last_off, last_push_at = v_now
    from (select a.pid, max(a.off) as last_off from accepted a group by a.pid) h
    where p.id = h.pid
  )
  select j.idx, j.txid,
         case when j.stored_id is null and j.first_idx = j.idx then 'queued' else 'duplicate' end,
         coalesce(j.stored_id, j.first_mid), j.pid,
         case when j.stored_id is null and j.first_idx = j.idx then j.trace_id
              else null end,
         j.queue_name
  from judged j
  order by j.idx;

  -- One notification per queue that received something: it wakes parked pops on every instance
  -- and feeds the live view (how many messages each partition received).
  perform pg_notify('queen_push', queen.bounded(jsonb_build_object(
            'queue', x.queue, 'namespace', x.namespace, 'task', x.task, 'at', queen.iso(v_now), 'pushed', x.pushed)))
  from (
    select q.name as queue, q.namespace, q.task,
           jsonb_object_agg(p.name, s.last_offset - s.first_offset + 1) filter (where s.partition_id is not null) as pushed
    from (select distinct e->>'queue' as qn, e->>'partition' as pn from jsonb_array_elements(p_items) e) i
    join queen.queues q on q.name = i.qn
    join queen.partitions p on p.queue_id = q.id and p.name = i.pn
    left join queen.segments s on s.partition_id = p.id and s.created_at = v_now
    group by q.id
  ) x
  where x.pushed is not null;
end
$$;
