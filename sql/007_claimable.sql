-- Scale (DESIGN.md "Cost rules"): claimable work is kept as data instead of searched for, the
-- figures are counters kept with the rows they summarize, and notifications are sent only when
-- some listener needs them.
--
-- * Every group of a queue (queen.queue_groups) has a cursor on every partition of it: a group
--   that joins a queue gets all of them at once, at their seeds, and a new partition gets one
--   per group. Lag is then a sum over cursors, and "never contacted" needs no anti-join.
-- * queen.backlog holds one row per (partition, group) with something above the cursor, in the
--   order pops claim (least recently served first), with the time before which it cannot be
--   claimed (live lease, retry delay, pause, window buffer, delayed processing). A push adds
--   rows, a pop or an ack that drains a partition removes its row, and pops walk an index of it.
-- * queen.queue_stats / queen.group_stats hold the sums of head and committed offsets. Each
--   connection adds to its own shard row, so writers never wait for each other on a counter.
--
-- The PL/pgSQL functions the app calls never scan a whole table that has an index
-- (enable_seqscan = off; jit = off, or that setting's cost penalty starts a 100 ms JIT compile),
-- and plan each statement for its call (plan_cache_mode = force_custom_plan; see 008), so no
-- estimate made on a young table can turn a keyed lookup into a scan for good. A young table has
-- no statistics at all: push's partition lookup once matched on queue_id alone and scanned the
-- whole queue per item (a 1,000-item push took 34 s at 45,000 partitions, against 0.1 s with the
-- lookup in 008). The helpers they call run under the caller's settings.

-- ---- notifications only when someone listens ----------------------------------------------

create table queen.instances (
  id text primary key,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now(),
  live_viewers boolean not null default false
);

-- PostgreSQL holds a database-wide lock from a notifying transaction's commit until it is
-- durable, so notifying transactions commit one at a time (8 clients here: 8,970 commits/s
-- without pg_notify, 2,330 with it). An instance wakes its own parked pops in process; wake-ups
-- are notified only when another instance is alive, events only while a live view is open.
create function queen.notify_wanted(p_events boolean) returns boolean
language plpgsql stable as $$
begin
  return (select case when p_events then coalesce(bool_or(i.live_viewers), false)
                      else count(*) > 1 or coalesce(bool_or(i.live_viewers), false) end
          from queen.instances i
          where i.seen_at > now() - interval '15 seconds');
end
$$;

create function queen.heartbeat(p_instance text, p_live_viewers boolean) returns void
language sql as $$
  insert into queen.instances (id, live_viewers) values (p_instance, p_live_viewers)
  on conflict (id) do update set seen_at = now(), live_viewers = excluded.live_viewers;
  delete from queen.instances where seen_at < now() - interval '1 hour';
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

-- ---- groups, cursors, backlog, counters ---------------------------------------------------

create table queen.queue_groups (
  queue_id uuid not null references queen.queues (id) on delete cascade,
  consumer_group text not null,
  created_at timestamptz not null default now(),
  primary key (queue_id, consumer_group)
);
create index queue_groups_group on queen.queue_groups (consumer_group);

alter table queen.cursors
  add column queue_id uuid,
  -- true while the position is only the seed a join gave it: a moved subscription re-seeds it
  add column seeded boolean not null default false,
  -- the lease duration the holder asked for (leaseSeconds, else the queue's leaseTime)
  add column lease_seconds integer,
  -- messages deleted before this group consumed them (012)
  add column evicted bigint not null default 0;
update queen.cursors c set queue_id = p.queue_id from queen.partitions p where p.id = c.partition_id;
alter table queen.cursors alter column queue_id set not null;

-- When the lifecycle job (012) should look at a partition next: when its oldest message comes of
-- age, or at the run after a look that found it of age but kept (a lagging group, a live lease);
-- null while it stores nothing. A push sets it on a partition that had none.
alter table queen.partitions add column retain_check_at timestamptz;
update queen.partitions p set retain_check_at = now() where exists (select 1 from queen.segments s where s.partition_id = p.id);
create index partitions_retain_check on queen.partitions (queue_id, retain_check_at) where retain_check_at is not null;
-- A join inserts a cursor per partition: a per-row foreign-key check would cost as much as the
-- insert. queen.delete_queue() removes a queue's cursors itself.
alter table queen.cursors drop constraint cursors_partition_id_fkey;
drop index queen.cursors_group;
create index cursors_queue_group on queen.cursors (queue_id, consumer_group);
create index cursors_queue_leases on queen.cursors (queue_id, lease_expires_at) where lease_id is not null;
create index cursors_paused on queen.cursors (queue_id) where paused;

-- No foreign keys, for the same reason as cursors.
create table queen.backlog (
  partition_id uuid not null,
  consumer_group text not null,
  queue_id uuid not null,
  -- the cursor's last claim; '-infinity' = never: the claim order
  last_claim_at timestamptz not null default '-infinity',
  -- not claimable before this (null: claimable now, as far as the mirror knows)
  blocked_until timestamptz,
  -- createdAt of the oldest message above the cursor
  pending_since timestamptz not null,
  primary key (partition_id, consumer_group)
);
create index backlog_ready on queen.backlog (queue_id, consumer_group, last_claim_at, partition_id) where blocked_until is null;
create index backlog_blocked on queen.backlog (queue_id, consumer_group, blocked_until) where blocked_until is not null;
-- Keyed by an expression that no pop predicate matches, so that a planner misled by a young
-- table's statistics can never pick it (and sort every row) over backlog_ready for a claim.
create index backlog_oldest on queen.backlog ((queue_id::text || '/' || consumer_group), pending_since);

-- The counter tables have no foreign keys either: a new shard row's key-share lock on its queue,
-- taken while cursors are held, formed deadlock cycles with joins and seeks (which hold the queue
-- row while they wait for cursors). queen.delete_queue() removes them itself.
create table queen.queue_stats (
  queue_id uuid not null,
  shard smallint not null,
  partitions bigint not null default 0,
  -- the sum of the partitions' head offsets: every message ever pushed
  messages bigint not null default 0,
  -- messages the lifecycle job deleted (012), and the stored payload bytes (pushed minus deleted)
  deleted bigint not null default 0,
  bytes bigint not null default 0,
  primary key (queue_id, shard)
);

create table queen.group_stats (
  queue_id uuid not null,
  consumer_group text not null,
  shard smallint not null,
  -- the sum of the group's committed offsets (a seed counts as committed)
  committed bigint not null default 0,
  redeliveries bigint not null default 0,
  lease_expiries bigint not null default 0,
  failures bigint not null default 0,
  dead_letters bigint not null default 0,
  -- messages deleted (retention, maxWaitTimeSeconds) before this group consumed them
  evicted bigint not null default 0,
  primary key (queue_id, consumer_group, shard)
);

-- The counter row this connection adds to.
create function queen.stats_shard() returns smallint
language sql stable as $$ select (pg_backend_pid() % 32)::smallint $$;

-- When the cursor's own state forbids a claim: a live lease, a retry delay, a pause.
create function queen.cursor_block(c queen.cursors) returns timestamptz
language sql stable as $$
  select greatest(
    case when c.lease_id is not null and c.lease_expires_at > now() then c.lease_expires_at end,
    case when c.retry_not_before > now() then c.retry_not_before end,
    case when c.paused and (c.paused_until is null or c.paused_until > now()) then coalesce(c.paused_until, 'infinity') end)
$$;

-- createdAt of the message just above `committed`: segments are contiguous, so it is the last
-- segment starting at or below committed + 1 (one index probe, whatever the partition's size).
create function queen.pending_since(p_partition uuid, p_committed bigint) returns timestamptz
language sql stable as $$
  select coalesce(
    (select s.created_at from queen.segments s
     where s.partition_id = p_partition and s.first_offset <= p_committed + 1
     order by s.first_offset desc limit 1),
    (select s.created_at from queen.segments s where s.partition_id = p_partition order by s.first_offset limit 1),
    now())
$$;

-- Where the cursors of a group joining a queue start: 0 in queue mode and without a durable
-- subscription; otherwise just before the first segment created at or after its start time.
create function queen.seeds(p_queue uuid, p_group text)
returns table (partition_id uuid, seed bigint)
language sql stable as $$
  with sub as (
    select s.start_at from queen.subscriptions s
    where s.queue_id = p_queue and s.consumer_group = p_group and p_group <> '__QUEUE_MODE__' and s.start_at is not null)
  select p.id,
         case when not exists (select 1 from sub) then 0
              else coalesce((select s.first_offset - 1 from queen.segments s
                             where s.partition_id = p.id and s.created_at >= (select start_at from sub)
                             order by s.created_at, s.first_offset limit 1), p.head_offset) end
  from queen.partitions p
  where p.queue_id = p_queue
$$;

-- Removes a drained (partition, group) from the backlog. A push in progress holds the partition
-- row, and might be adding messages this transaction cannot see: then the row stays, and the next
-- pop or ack to look at it tries again. Otherwise the share lock keeps pushes out until commit.
create function queen.drop_drained(p_partition uuid, p_group text, p_committed bigint) returns void
language plpgsql as $$
begin
  perform 1 from queen.partitions p where p.id = p_partition for share skip locked;
  if found and (select p.head_offset from queen.partitions p where p.id = p_partition) <= p_committed then
    delete from queen.backlog b where b.partition_id = p_partition and b.consumer_group = p_group;
  end if;
end
$$;

-- Recomputes the backlog rows and counters of (queue, group) from its cursors: after a join, a
-- seek or a re-seed. Reads every partition of the queue; callers hold the queue row's lock.
create function queen.rebuild_group(p_queue uuid, p_group text) returns void
language plpgsql as $$
begin
  -- through backlog_oldest's key: no other index leads with (queue, group)
  delete from queen.backlog b where (b.queue_id::text || '/' || b.consumer_group) = (p_queue::text || '/' || p_group);
  insert into queen.backlog (partition_id, consumer_group, queue_id, last_claim_at, blocked_until, pending_since)
  select c.partition_id, p_group, p_queue, coalesce(c.last_claim_at, '-infinity'), queen.cursor_block(c),
         queen.pending_since(c.partition_id, c.committed_offset)
  from queen.cursors c
  join queen.partitions p on p.id = c.partition_id
  where c.queue_id = p_queue and c.consumer_group = p_group and p.head_offset > c.committed_offset;

  delete from queen.group_stats g where g.queue_id = p_queue and g.consumer_group = p_group;
  insert into queen.group_stats (queue_id, consumer_group, shard, committed, redeliveries, lease_expiries, failures, dead_letters, evicted)
  select p_queue, p_group, 0, coalesce(sum(c.committed_offset), 0), coalesce(sum(c.redeliveries), 0),
         coalesce(sum(c.lease_expiries), 0), coalesce(sum(c.failures), 0), coalesce(sum(c.dead_letters), 0),
         coalesce(sum(c.evicted), 0)
  from queen.cursors c
  where c.queue_id = p_queue and c.consumer_group = p_group;
end
$$;

-- Makes p_group a group of the queue: a cursor on every partition at its seed, their backlog rows
-- and counters. Once per (queue, group); a no-op (one index probe) afterwards. The queue row's
-- lock keeps pushes (which hold a key-share lock on it) out meanwhile, so no partition is missed.
create function queen.join_group(p_queue uuid, p_group text) returns void
language plpgsql as $$
begin
  if exists (select 1 from queen.queue_groups g where g.queue_id = p_queue and g.consumer_group = p_group) then
    return;
  end if;
  perform 1 from queen.queues q where q.id = p_queue for update;
  if not found then
    return;
  end if;
  insert into queen.queue_groups (queue_id, consumer_group) values (p_queue, p_group) on conflict do nothing;
  if not found then
    return;
  end if;
  insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, seeded)
  select s.partition_id, p_group, p_queue, s.seed, true from queen.seeds(p_queue, p_group) s
  on conflict do nothing;
  perform queen.rebuild_group(p_queue, p_group);
end
$$;

-- Joins p_group to each queue, in queue id order (so two joins cannot deadlock).
create function queen.join_groups(p_queues uuid[], p_group text) returns void
language plpgsql as $$
declare
  v_queue uuid;
begin
  for v_queue in
    select x from unnest(p_queues) x
    where not exists (select 1 from queen.queue_groups g where g.queue_id = x and g.consumer_group = p_group)
    order by x
  loop
    perform queen.join_group(v_queue, p_group);
  end loop;
end
$$;

-- ---- existing data ------------------------------------------------------------------------

insert into queen.queue_groups (queue_id, consumer_group)
select distinct c.queue_id, c.consumer_group from queen.cursors c
union
select s.queue_id, s.consumer_group from queen.subscriptions s;

insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, seeded)
select s.partition_id, g.consumer_group, g.queue_id, s.seed, true
from queen.queue_groups g cross join lateral queen.seeds(g.queue_id, g.consumer_group) s
on conflict do nothing;

select queen.rebuild_group(g.queue_id, g.consumer_group) from queen.queue_groups g;

insert into queen.queue_stats (queue_id, shard, partitions, messages, bytes)
select p.queue_id, 0, count(*), sum(p.head_offset),
       coalesce((select sum(pg_column_size(m.payload)) from queen.messages m join queen.partitions x on x.id = m.partition_id
                 where x.queue_id = p.queue_id), 0)
from queen.partitions p group by p.queue_id;

update queen.cursors c set lease_seconds = q.lease_time
from queen.queues q where q.id = c.queue_id and c.lease_id is not null;

drop function queen.pop_candidates(uuid[], text, text);
drop function queen.ensure_cursor(uuid, text);
drop function queen.seed_offset(uuid, uuid, text);
