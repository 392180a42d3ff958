-- Moves `committed` over the contiguous run of done offsets just above it (as 004).
create or replace function queen.advance(p_committed bigint, p_done bigint[], out committed bigint, out done bigint[])
language plpgsql immutable as $$
declare
  i integer := 1;
begin
  done := array(select distinct x from unnest(p_done) x where x > p_committed order by x);
  while i <= cardinality(done) and done[i] = p_committed + i loop
    i := i + 1;
  end loop;
  committed := p_committed + i - 1;
  done := done[i:];
end
$$;

-- Every offset at or below it is gone (trimmed by the lifecycle job or deleted): the offset just
-- before the first message still stored, or the head when the partition stores nothing. No cursor
-- is placed below it. One index probe.
create or replace function queen.low_water(p_partition uuid) returns bigint
language sql stable as $$
  select coalesce((select m."offset" - 1 from queen.messages m where m.partition_id = p_partition order by m."offset" limit 1),
                  (select p.head_offset from queen.partitions p where p.id = p_partition))
$$;

-- Where a cursor placed by time starts: at the head, or just before the first segment created at
-- or after p_at; never below the low-water mark (a segment the job trimmed partway).
create or replace function queen.position_at(p_partition uuid, p_to_end boolean, p_at timestamptz) returns bigint
language sql stable as $$
  select greatest(queen.low_water(p_partition), case
    when p_to_end then (select p.head_offset from queen.partitions p where p.id = p_partition)
    else coalesce((select s.first_offset - 1 from queen.segments s
                   where s.partition_id = p_partition and s.created_at >= p_at
                   order by s.created_at, s.first_offset limit 1),
                  (select p.head_offset from queen.partitions p where p.id = p_partition)) end)
$$;

-- Moves `committed` over done offsets and over offsets whose message is gone (deleted, removed by
-- the lifecycle job): just before the first stored message above it that is not done, or to the
-- head when there is none. One statement, so the head and the messages are read from one snapshot
-- (a push writes both in one transaction).
create or replace function queen.passed(p_partition uuid, p_committed bigint, p_done bigint[],
                                        out committed bigint, out done bigint[])
-- plpgsql, not sql: a SQL function called from a statement is planned again at every execution of
-- that statement; a plpgsql one keeps its plans for the connection (tests/plans.test.ts)
language plpgsql stable as $$
begin
  committed := greatest(p_committed, coalesce(
    (select m."offset" - 1 from queen.messages m
     where m.partition_id = p_partition and m."offset" > p_committed and not (m."offset" = any (p_done))
     order by m."offset" limit 1),
    (select p.head_offset from queen.partitions p where p.id = p_partition)));
  done := array(select distinct x from unnest(p_done) x where x > committed order by x);
end
$$;

-- How many messages are stored in (p_from, p_to]: what a cursor moving over that range skips or
-- replays, counted in messages, not offsets.
create or replace function queen.stored_between(p_partition uuid, p_from bigint, p_to bigint) returns bigint
language sql stable as $$
  select count(*) from queen.messages m where m.partition_id = p_partition and m."offset" > p_from and m."offset" <= p_to
$$;

-- Where the cursors of a group joining a queue start: at the low-water mark in queue mode and
-- without a durable subscription; otherwise just before the first segment created at or after its
-- start time.
create or replace function queen.seeds(p_queue uuid, p_group text)
returns table (partition_id uuid, seed bigint)
language sql stable as $$
  with sub as (
    select s.start_at from queen.subscriptions s
    where s.queue_id = p_queue and s.consumer_group = p_group and p_group <> '__QUEUE_MODE__' and s.start_at is not null)
  select p.id,
         case when not exists (select 1 from sub) then queen.low_water(p.id)
              else queen.position_at(p.id, false, (select start_at from sub)) end
  from queen.partitions p
  where p.queue_id = p_queue
$$;

create or replace function queen.drop_drained(p_partition uuid, p_group text, p_committed bigint) returns void
language plpgsql as $$
declare
  v_locked boolean;
begin
  -- a statement of its own: the head below is read with a snapshot taken after the lock
  v_locked := queen.try_share_partition(p_partition);
  if v_locked and (select p.head_offset from queen.partitions p where p.id = p_partition) <= p_committed then
    delete from queen.backlog b where b.partition_id = p_partition and b.consumer_group = p_group;
  end if;
end
$$;

-- Recomputes the backlog rows and counters of (queue, group) from its cursors: after a join, a
-- seek or a re-seed. Reads every partition of the queue; callers hold the queue row's lock.
create or replace function queen.rebuild_group(p_queue uuid, p_group text) returns void
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
create or replace function queen.join_group(p_queue uuid, p_group text) returns void
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
create or replace function queen.join_groups(p_queues uuid[], p_group text) returns void
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

-- Adds counter deltas to this connection's counter rows, in key order.
-- p_rows: [{queue, group, committed, redeliveries, leaseExpiries, failures, deadLetters, evicted}].
create or replace function queen.add_group_stats(p_rows jsonb) returns void
language plpgsql as $$
begin
  insert into queen.group_stats as t (queue_id, consumer_group, shard, committed, redeliveries, lease_expiries, failures, dead_letters, evicted)
  select (r->>'queue')::uuid, r->>'group', queen.stats_shard(),
         sum(coalesce((r->>'committed')::bigint, 0)), sum(coalesce((r->>'redeliveries')::bigint, 0)),
         sum(coalesce((r->>'leaseExpiries')::bigint, 0)), sum(coalesce((r->>'failures')::bigint, 0)),
         sum(coalesce((r->>'deadLetters')::bigint, 0)), sum(coalesce((r->>'evicted')::bigint, 0))
  from jsonb_array_elements(p_rows) r
  group by (r->>'queue')::uuid, r->>'group'
  order by (r->>'queue')::uuid, r->>'group'
  on conflict (queue_id, consumer_group, shard) do update set
    committed = t.committed + excluded.committed,
    redeliveries = t.redeliveries + excluded.redeliveries,
    lease_expiries = t.lease_expiries + excluded.lease_expiries,
    failures = t.failures + excluded.failures,
    dead_letters = t.dead_letters + excluded.dead_letters,
    evicted = t.evicted + excluded.evicted;
end
$$;

-- Moves the cursors of (queue, group) that still stand where a join seeded them (never claimed,
-- seeked or acked) to the seeds of the group's current subscription.
create or replace function queen.reseed(p_queue uuid, p_group text) returns void
language plpgsql as $$
begin
  perform 1 from queen.queues q where q.id = p_queue for update;
  -- every cursor of the group, not only the seeded ones: the rebuild below reads them all, and an
  -- ack in progress on one must be done first
  perform 1 from queen.cursors c where c.queue_id = p_queue and c.consumer_group = p_group
  order by c.partition_id for update;
  update queen.cursors c set committed_offset = s.seed, acked_offsets = '{}'
  from queen.seeds(p_queue, p_group) s
  where c.partition_id = s.partition_id and c.consumer_group = p_group and c.seeded and c.lease_id is null
    and c.committed_offset <> s.seed;
  perform queen.rebuild_group(p_queue, p_group);
end
$$;

-- Gives a queue the subscriptions (and groups) of every scope it falls in.
create or replace function queen.adopt_scope_subscriptions(p_queue uuid) returns void
language plpgsql as $$
declare
  v_group text;
begin
  for v_group in
    with adopted as (
      insert into queen.subscriptions (queue_id, consumer_group, mode, start_at)
      select q.id, s.consumer_group, s.mode, min(s.start_at)
      from queen.queues q
      join queen.scope_subscriptions s
        on (s.namespace = '' or s.namespace = q.namespace) and (s.task = '' or s.task = q.task)
      where q.id = p_queue
      group by q.id, s.consumer_group, s.mode
      on conflict do nothing
      returning consumer_group)
    select consumer_group from adopted order by consumer_group
  loop
    perform queen.join_group(p_queue, v_group);
  end loop;
end
$$;

-- The backlog rows of a partition follow its cursors after they moved (a retention run, a
-- deleted message): claimable or blocked again, the oldest pending time moved, a drained pair gone.
create or replace function queen.follow_cursors(p_partition uuid) returns void
language plpgsql as $$
begin
  update queen.backlog b set blocked_until = queen.cursor_block(c),
                             pending_since = queen.pending_since(c.partition_id, c.committed_offset)
  from queen.cursors c
  where b.partition_id = p_partition and c.partition_id = p_partition and c.consumer_group = b.consumer_group;
  perform queen.drop_drained(p_partition, c.consumer_group, c.committed_offset)
  from queen.cursors c join queen.partitions p on p.id = c.partition_id
  where c.partition_id = p_partition and p.head_offset <= c.committed_offset;
end
$$;
