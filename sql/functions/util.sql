-- UUIDv7: 48-bit Unix milliseconds, then random bits, version 7, variant 10.
create or replace function queen.uuidv7() returns uuid
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
-- stable as to_char is: an immutable SQL function over a stable body is never inlined
create or replace function queen.iso(ts timestamptz) returns text
language sql stable parallel safe as $$
  select to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Notification payloads are limited to 8000 bytes (not characters): past that, the per-partition
-- detail goes, and past that again everything but what a wake-up needs.
create or replace function queen.bounded(p jsonb) returns text
language sql immutable as $$
  select case
    when octet_length(p::text) <= 7900 then p::text
    when octet_length((p - 'pushed' - 'partitions')::text) <= 7800
      then (p - 'pushed' - 'partitions' || jsonb_build_object('truncated', true))::text
    else jsonb_strip_nulls(jsonb_build_object('type', p->'type', 'queue', p->'queue', 'namespace', p->'namespace',
           'task', p->'task', 'group', p->'group', 'at', p->'at', 'truncated', true))::text
  end
$$;

create or replace function queen.emit(p_event jsonb) returns void
language sql as $$
  select pg_notify('queen_events', queen.bounded(p_event || jsonb_build_object('at', queen.iso(clock_timestamp()))))
  where queen.notify_wanted(true)
$$;

create or replace function queen.notify_claimable(p_queue uuid) returns void
language sql as $$
  select pg_notify('queen_push', json_build_object('queue', q.name, 'namespace', q.namespace, 'task', q.task)::text)
  from queen.queues q where q.id = p_queue and queen.notify_wanted(false)
$$;

create or replace function queen.audit(p_actor text, p_action text, p_target_type text, p_target text, p_reason text,
                            p_result text, p_details jsonb default '{}')
returns void
language sql as $$
  insert into queen.audit_log (actor, action, target_type, target, reason, result, details)
  values (p_actor, p_action, p_target_type, p_target, p_reason, p_result, coalesce(p_details, '{}'))
$$;

-- PostgreSQL holds a database-wide lock from a notifying transaction's commit until it is
-- durable, so notifying transactions commit one at a time (8 clients here: 8,970 commits/s
-- without pg_notify, 2,330 with it). An instance wakes its own parked pops in process; wake-ups
-- are notified only when another instance is alive, events only while a live view is open.
create or replace function queen.notify_wanted(p_events boolean) returns boolean
language plpgsql stable as $$
begin
  return (select case when p_events then coalesce(bool_or(i.live_viewers), false)
                      else count(*) > 1 or coalesce(bool_or(i.live_viewers), false) end
          from queen.instances i
          where i.seen_at > now() - interval '15 seconds');
end
$$;

-- The counter row this connection adds to.
create or replace function queen.stats_shard() returns smallint
language sql stable as $$ select (pg_backend_pid() % 32)::smallint $$;

-- A seek's audit row lists at most this many partitions (moved ones first, then those whose lease
-- it ended; with a count of all moved): a queue may have 100,000 partitions.
create or replace function queen.audit_partitions_limit() returns integer language sql immutable as 'select 1000';

-- What a seek's audit entry for a partition adds when the seek ended its lease.
create or replace function queen.lease_ended(p_lease uuid) returns jsonb language sql immutable as $$
  select case when p_lease is null then '{}'::jsonb else jsonb_build_object('leaseEnded', true, 'leaseId', p_lease) end
$$;

-- Message ids increase with the offset within a partition (the streams SDKs sort a batch by
-- createdAt, then id, and ack the last as covering it). RFC 9562 §6.2 method 1: a 42-bit counter
-- in rand_a and the first 30 bits of rand_b, the last 32 bits random. queen.push() counts up,
-- under the partition's lock, from the partition's newest id or from a seed at its commit time
-- (counter random below 2^41), whichever is greater; a counter overflow carries into the
-- millisecond. Ids are handled as numbers: millisecond * 2^42 + counter.

-- An id's (millisecond, counter) as one number.
-- One expression, no FROM: inlined into the statement that calls it (tests/plans.test.ts).
create or replace function queen.uuidv7_number(p_id uuid) returns numeric
language sql immutable parallel safe as $$
  select ('x' || lpad(substr(replace(p_id::text, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint::numeric * 4398046511104
         + ((('x' || lpad(substr(replace(p_id::text, '-', ''), 14, 3), 16, '0'))::bit(64)::bigint << 30)
            | (('x' || lpad(substr(replace(p_id::text, '-', ''), 17, 8), 16, '0'))::bit(64)::bigint & 1073741823))
$$;

-- What a push to this partition counts up from. plpgsql for its cached plan, as queen.passed, and
-- that plan made once whatever the calling push's mode: a push of 500 partitions calls it 500 times.
create or replace function queen.uuidv7_base(p_partition uuid, p_at timestamptz) returns numeric
language plpgsql volatile set plan_cache_mode = force_generic_plan as $$
begin
  return greatest(
    (select queen.uuidv7_number(m.id) from queen.messages m where m.partition_id = p_partition order by m."offset" desc limit 1),
    -- numeric throughout: a double here would round the counter away (2^90 needs 28 digits)
    floor(extract(epoch from p_at) * 1000)::numeric * 4398046511104 + floor(random() * 2199023255552)::bigint);
end
$$;

-- The id p_n steps after p_base.
create or replace function queen.uuidv7_next(p_base numeric, p_n bigint) returns uuid
language sql volatile parallel safe as $$
  select (lpad(to_hex(div(p_base + p_n, 4398046511104)::bigint), 12, '0')
          || '7' || lpad(to_hex((mod(p_base + p_n, 4398046511104)::bigint >> 30) & 4095), 3, '0')
          || lpad(to_hex(2147483648 | (mod(p_base + p_n, 4398046511104)::bigint & 1073741823)), 8, '0')
          || lpad(to_hex(floor(random() * 4294967296)::bigint), 8, '0'))::uuid
$$;
