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
create or replace function queen.iso(ts timestamptz) returns text
language sql immutable parallel safe as $$
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
