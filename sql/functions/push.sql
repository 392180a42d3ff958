-- Implicit queues (002), now adopting their scopes' subscriptions.
create or replace function queen.ensure_queues(p_names text[]) returns void
language plpgsql as $$
declare
  v_queue uuid;
begin
  for v_queue in
    insert into queen.queues (id, name, namespace, task)
    select queen.uuidv7(), n, split_part(n, '.', 1), split_part(n, '.', 2)
    from unnest(p_names) as n
    where not exists (select 1 from queen.queues q where q.name = n offset 0)
    on conflict (name) do nothing
    returning id
  loop
    if exists (select 1 from queen.scope_subscriptions) then
      perform queen.adopt_scope_subscriptions(v_queue);
    end if;
  end loop;
end
$$;

-- The push: the queen.push_* steps below, in order, each called once per call (never per item).
-- Planned once per connection (force_generic_plan) and only as index walks (tests/plans.test.ts
-- reads the plans of every step): no statement joins the call's items with anything but by a
-- lookup per item (a partition's slot in arrays, an index probe for a stored duplicate), so no plan
-- compares a 500-item push's items with its 500 partitions pairwise; every lookup by a list of keys
-- is a lateral probe, which `offset 0` keeps the planner from turning into a join it could reorder.
--
-- The steps set nothing of their own: queen.push alone calls them (the plans test checks), so they
-- run under its settings, as queen.after_ack under queen.ack's; settings of their own would cost a
-- dozen changes and undos per push (3-4% of a batch-1 push). A step that answers something is
-- called in an assignment, which PL/pgSQL evaluates without the executor run a PERFORM costs: so
-- the checks answer, and queen.push raises.
create or replace function queen.push(p_items jsonb)
returns table (idx integer, transaction_id text, status text, message_id uuid, partition_id uuid,
               trace_id text, queue_name text, namespace text, task text)
language plpgsql set plan_cache_mode = force_generic_plan set enable_seqscan = off set enable_bitmapscan = off
set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
declare
  v_pair_queues text[];
  v_pair_partitions text[];
  v_queues text[];
  v_txids text[];
  v_queue_ids uuid[];
  v_pair_qids uuid[];
  v_pair_pnames text[];
  v_new uuid[];
  v_seeded_above_zero boolean := false;
  v_locked uuid[];
  v_now timestamptz;
  v_stored jsonb;
  v_full jsonb;
begin
  -- What the call names: its distinct (queue, partition) pairs, as two arrays read side by side, its
  -- queues and its transaction ids.
  select k.qs, k.ps, array(select distinct q from unnest(k.qs) as q),
         array(select distinct e->>'transactionId' from jsonb_array_elements(p_items) e)
  into v_pair_queues, v_pair_partitions, v_queues, v_txids
  from (select array_agg(k.q) as qs, array_agg(k.p) as ps
        from (select distinct e->>'queue' as q, e->>'partition' as p from jsonb_array_elements(p_items) e) k) k;

  v_queue_ids := queen.push_lock_queues(v_queues);
  -- The pairs by queue id: every lookup of a partition then matches both columns of partitions'
  -- unique index from one relation.
  select array_agg(q.id order by q.id, k.p), array_agg(k.p order by q.id, k.p) into v_pair_qids, v_pair_pnames
  from unnest(v_pair_queues, v_pair_partitions) as k(q, p)
  cross join lateral (select q.id from queen.queues q where q.name = k.q offset 0) q;
  v_new := queen.push_create_partitions(v_pair_qids, v_pair_pnames);
  v_locked := queen.push_lock_partitions(v_pair_qids, v_pair_pnames);
  perform queen.push_serialise_max_size(v_queue_ids);
  -- The caller encrypts payloads of encrypted queues; its view of which queues those are may be
  -- stale right after a configure. Refuse rather than store plaintext: it retries with fresh flags.
  if queen.push_has_plaintext_for_encrypted(p_items, v_queues) then
    raise exception 'push: an item for an encrypted queue is not encrypted' using errcode = 'QM003';
  end if;

  -- The call's time: its segments are the ones created at it, and its ids count up from it.
  v_now := clock_timestamp();
  v_stored := queen.push_stored_duplicates(v_txids, v_now);
  return query select * from queen.push_store(p_items, v_locked, v_stored, v_now);

  if v_new is not null then
    v_seeded_above_zero := queen.push_seed_cursors(v_new);
  end if;
  perform queen.push_mark_backlog(v_locked, v_now);
  perform queen.push_add_queue_stats(v_locked, v_new, v_now);
  -- maxSize: a push that took a queue above it is refused whole (this raise undoes it).
  v_full := queen.push_overfull_queue(v_queues, v_locked, v_now);
  if v_full is not null then
    raise exception 'queue % is full', v_full->>'queue' using errcode = 'QM004', detail = v_full::text;
  end if;
  if v_seeded_above_zero then
    perform queen.push_count_seeded_commits(v_new);
  end if;
  if queen.notify_wanted(false) then
    perform queen.push_notify(v_locked, v_now);
  end if;
end
$$;

-- The queues, created when missing: a queue deleted concurrently is created again, as a push after
-- the delete would. Holding a key-share lock on each queue row (in id order, as joins lock them)
-- keeps queen.delete_queue() and group joins out until the push commits. Their ids, in that order.
create or replace function queen.push_lock_queues(p_queues text[]) returns uuid[]
language plpgsql as $$
declare
  v_attempt integer := 0;
  v_ids uuid[];
begin
  loop
    v_attempt := v_attempt + 1;
    perform queen.ensure_queues(p_queues);
    v_ids := array(
      select l.id
      from (select q.id from unnest(p_queues) as n
            cross join lateral (select q.id from queen.queues q where q.name = n offset 0) q
            order by q.id) k
      cross join lateral (select q.id from queen.queues q where q.id = k.id offset 0 for key share) l);
    exit when cardinality(v_ids) = cardinality(p_queues);
    if v_attempt >= 3 then
      raise exception 'push: queues % keep disappearing', p_queues;
    end if;
  end loop;
  return v_ids;
end
$$;

-- The partitions of the (queue id, partition name) pairs that do not exist yet, created: their ids
-- (null when there are none).
create or replace function queen.push_create_partitions(p_qids uuid[], p_names text[]) returns uuid[]
language plpgsql as $$
declare
  v_new uuid[];
begin
  with created as (
    insert into queen.partitions (id, queue_id, name)
    select queen.uuidv7(), k.qid, k.pname
    from unnest(p_qids, p_names) as k(qid, pname)
    where not exists (select 1 from queen.partitions x where x.queue_id = k.qid and x.name = k.pname offset 0)
    on conflict (queue_id, name) do nothing
    returning id)
  select array_agg(id) into v_new from created;
  return v_new;
end
$$;

-- The pairs' partitions, locked in id order so that concurrent multi-partition pushes cannot
-- deadlock: the sorted ids drive the loop that locks each by its key. Their ids, in that order.
create or replace function queen.push_lock_partitions(p_qids uuid[], p_names text[]) returns uuid[]
language plpgsql as $$
declare
  v_locked uuid[];
begin
  v_locked := array(
    select l.id
    from (select p.id
          from unnest(p_qids, p_names) as k(qid, pname)
          cross join lateral (select p.id from queen.partitions p where p.queue_id = k.qid and p.name = k.pname offset 0) p
          order by p.id) k
    cross join lateral (select p.id from queen.partitions p where p.id = k.id offset 0 for no key update) l);
  if cardinality(v_locked) = 0 then
    raise exception 'push: partitions not found';
  end if;
  return v_locked;
end
$$;

-- Pushes to a queue with maxSize go one at a time, so that queen.push_overfull_queue sees every
-- other one.
create or replace function queen.push_serialise_max_size(p_queue_ids uuid[]) returns void
language plpgsql as $$
begin
  perform 1
  from (select q.id from unnest(p_queue_ids) as k(id)
        cross join lateral (select q.id from queen.queues q where q.id = k.id and q.max_size > 0 offset 0) q
        order by q.id) k
  cross join lateral (select 1 from queen.queues q where q.id = k.id offset 0 for no key update) l;
end
$$;

-- Whether an item for an encrypted queue is not encrypted: the call's encrypted queues read once
-- (a probe per queue, not per item), then each item looked up among them.
create or replace function queen.push_has_plaintext_for_encrypted(p_items jsonb, p_queues text[]) returns boolean
language plpgsql as $$
declare
  v_encrypted jsonb := (
    select jsonb_object_agg(q.name, true) from unnest(p_queues) as n
    cross join lateral (select q.name from queen.queues q where q.name = n and q.encryption_enabled offset 0) q);
begin
  if v_encrypted is null then
    return false;
  end if;
  return exists (
    select 1 from jsonb_array_elements(p_items) e
    where v_encrypted ? (e->>'queue') and not coalesce((e->>'encrypted')::boolean, false));
end
$$;

-- What is already stored under the transaction ids (by transaction id alone, so that only the
-- (transaction_id, partition_id) index fits), and what the lifecycle job or an operator removed,
-- remembered for the dedup window: {partition id || transaction id: message id}.
create or replace function queen.push_stored_duplicates(p_txids text[], p_now timestamptz) returns jsonb
language plpgsql as $$
declare
  v_stored jsonb;
begin
  select jsonb_object_agg(s.partition_id::text || s.transaction_id, s.id) into v_stored
  from (select m.partition_id, m.transaction_id, m.id
        from queen.messages m
        where m.transaction_id = any (p_txids)
        union all
        select r.partition_id, r.transaction_id, r.message_id
        from queen.removed_transactions r
        where r.transaction_id = any (p_txids) and r.forget_at > p_now) s;
  return v_stored;
end
$$;

-- The items appended to the locked partitions (their messages, one segment per partition, the
-- heads moved to the segments' ends), and each item's answer in the order of the call: queued with
-- its new id, or a duplicate with the id stored before (p_stored) or of its first in the call.
create or replace function queen.push_store(p_items jsonb, p_locked uuid[], p_stored jsonb, p_now timestamptz)
returns table (idx integer, transaction_id text, status text, message_id uuid, partition_id uuid,
               trace_id text, queue_name text, namespace text, task text)
language plpgsql as $$
#variable_conflict use_column
declare
  -- the locked partitions, slot by slot, and each (queue, partition)'s slot
  v_pids uuid[];
  v_names text[];
  v_heads bigint[];
  v_qnames text[];
  v_namespaces text[];
  v_tasks text[];
  v_bases numeric[];
  v_slot jsonb;
begin
  -- one pass of one aggregate over the partitions, so slot n is the same partition in every array
  -- whatever the order (sorting each array by p_locked's was 2% of a batch-1 push)
  select array_agg(p.id), array_agg(p.name), array_agg(p.head_offset), array_agg(q.name), array_agg(q.namespace),
         array_agg(q.task), array_agg(queen.uuidv7_base(p.id, p_now))
  into v_pids, v_names, v_heads, v_qnames, v_namespaces, v_tasks, v_bases
  from unnest(p_locked) as l(id)
  cross join lateral (select p.* from queen.partitions p where p.id = l.id offset 0) p
  cross join lateral (select q.* from queen.queues q where q.id = p.queue_id offset 0) q;
  -- {queue: {partition: slot}}
  select jsonb_object_agg(x.qname, x.slots) into v_slot
  from (select u.qname, jsonb_object_agg(u.pname, u.n) as slots
        from unnest(v_qnames, v_names) with ordinality as u(qname, pname, n)
        group by u.qname) x;

  return query
  with items as (
    select (t.ord - 1)::integer as idx, v_qnames[t.n] as queue_name, v_namespaces[t.n] as namespace,
           v_tasks[t.n] as task, v_pids[t.n] as pid, v_heads[t.n] as head_offset, v_bases[t.n] as id_base,
           t.e->>'transactionId' as txid,
           t.e->'payload' as payload, coalesce((t.e->>'encrypted')::boolean, false) as encrypted,
           t.e->>'producerSub' as producer_sub, t.e->>'traceId' as trace_id
    from (select e.e, e.ord, (v_slot -> (e.e->>'queue') ->> (e.e->>'partition'))::integer as n
          from jsonb_array_elements(p_items) with ordinality as e(e, ord)) t
  ),
  firsts as (
    select i.*, (p_stored ->> (i.pid::text || i.txid))::uuid as stored_id,
           first_value(i.idx) over w as first_idx
    from items i
    window w as (partition by i.pid, i.txid order by i.idx)
  ),
  -- ids increase with the offset within a partition, across calls too (util.sql); a repeat of a
  -- transaction id in the call answers the id of its first
  judged as (
    select n.*, first_value(n.new_id) over (partition by n.pid, n.txid order by n.idx) as first_mid
    from (select r.*, case when r.accepted then queen.uuidv7_next(r.id_base, r.rank) end as new_id
          from (select f.*, f.stored_id is null and f.first_idx = f.idx as accepted,
                       count(*) filter (where f.stored_id is null and f.first_idx = f.idx) over (partition by f.pid order by f.idx) as rank
                from firsts f) r) n
  ),
  accepted as (
    select j.*, j.head_offset + j.rank as off, j.new_id as mid
    from judged j
    where j.accepted
  ),
  new_segments as (
    insert into queen.segments (partition_id, first_offset, last_offset, created_at)
    select a.pid, min(a.off), max(a.off), p_now from accepted a group by a.pid
  ),
  new_messages as (
    insert into queen.messages (partition_id, "offset", id, transaction_id, trace_id, payload,
                                encrypted, producer_sub, segment_offset)
    select a.pid, a.off, a.mid, a.txid, a.trace_id, a.payload, a.encrypted, a.producer_sub,
           a.head_offset + 1
    from accepted a
  )
  select j.idx, j.txid,
         case when j.stored_id is null and j.first_idx = j.idx then 'queued' else 'duplicate' end,
         coalesce(j.stored_id, j.first_mid), j.pid,
         case when j.stored_id is null and j.first_idx = j.idx then j.trace_id
              else null end,
         j.queue_name, j.namespace, j.task
  from judged j
  order by j.idx;

  -- The heads of the partitions that received messages: their segment of this call ends there.
  update queen.partitions p
  set head_offset = (select s.last_offset from queen.segments s where s.partition_id = p.id and s.created_at = p_now),
      last_push_at = p_now, retain_check_at = coalesce(p.retain_check_at, p_now)
  where p.id = any (p_locked)
    and exists (select 1 from queen.segments s where s.partition_id = p.id and s.created_at = p_now offset 0);
end
$$;

-- A new partition gets a cursor for each group of its queue, at the group's seed (0, unless a
-- subscription starts after this push). Whether any starts above 0: no one else sees a new
-- partition's cursors before the push commits, so that says if queen.push_count_seeded_commits has
-- anything to count.
create or replace function queen.push_seed_cursors(p_new uuid[]) returns boolean
language plpgsql as $$
declare
  v_above_zero boolean;
begin
  with seeded as (
    insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, seeded)
    select p.id, g.consumer_group, p.queue_id,
           coalesce((select s.first_offset - 1 from queen.segments s
                     where s.partition_id = p.id and s.created_at >= sub.start_at
                     order by s.created_at, s.first_offset limit 1),
                    case when sub.start_at is null then 0 else p.head_offset end),
           true
    from unnest(p_new) as n(id)
    cross join lateral (select p.* from queen.partitions p where p.id = n.id offset 0) p
    cross join lateral (select g.consumer_group from queen.queue_groups g where g.queue_id = p.queue_id offset 0) g
    left join lateral (select sub.start_at from queen.subscriptions sub
                       where sub.queue_id = p.queue_id and sub.consumer_group = g.consumer_group
                         and g.consumer_group <> '__QUEUE_MODE__' offset 0) sub on true
    on conflict do nothing
    returning committed_offset)
  select coalesce(bool_or(committed_offset > 0), false) into v_above_zero from seeded;
  return v_above_zero;
end
$$;

-- Every group now has something above its cursor on the partitions that received messages.
create or replace function queen.push_mark_backlog(p_locked uuid[], p_now timestamptz) returns void
language plpgsql as $$
begin
  insert into queen.backlog (partition_id, consumer_group, queue_id, last_claim_at, pending_since)
  select c.partition_id, c.consumer_group, c.queue_id, coalesce(c.last_claim_at, '-infinity'), p_now
  from unnest(p_locked) as l(id)
  cross join lateral (select s.last_offset from queen.segments s where s.partition_id = l.id and s.created_at = p_now offset 0) s
  cross join lateral (select c.* from queen.cursors c
                      where c.partition_id = l.id and c.committed_offset < s.last_offset offset 0) c
  on conflict do nothing;
end
$$;

-- The queues' counters (queue_stats): the new partitions, and the messages and bytes stored.
create or replace function queen.push_add_queue_stats(p_locked uuid[], p_new uuid[], p_now timestamptz) returns void
language plpgsql as $$
begin
  insert into queen.queue_stats as t (queue_id, shard, partitions, messages, bytes)
  select p.queue_id, queen.stats_shard(), count(*) filter (where p.id = any (coalesce(p_new, '{}'))),
         coalesce(sum(s.last_offset - s.first_offset + 1), 0),
         coalesce(sum((select sum(pg_column_size(m.payload)) from queen.messages m
                       where m.partition_id = s.partition_id and m."offset" between s.first_offset and s.last_offset)), 0)
  from unnest(p_locked) as l(id)
  cross join lateral (select p.id, p.queue_id from queen.partitions p where p.id = l.id offset 0) p
  left join lateral (select s.* from queen.segments s where s.partition_id = p.id and s.created_at = p_now offset 0) s on true
  group by p.queue_id
  order by p.queue_id
  on conflict (queue_id, shard) do update
    set partitions = t.partitions + excluded.partitions, messages = t.messages + excluded.messages, bytes = t.bytes + excluded.bytes;
end
$$;

-- The first of the queues with a maxSize whose unconsumed messages (the most behind group's lag;
-- with no group, every stored message) this push took above it, with the figures; null when none.
-- Read after the push is counted, and before new cursors' seeds count as committed.
create or replace function queen.push_overfull_queue(p_queues text[], p_locked uuid[], p_now timestamptz) returns jsonb
language plpgsql as $$
declare
  v_full jsonb;
begin
  select jsonb_build_object('queue', x.name, 'maxSize', x.max_size, 'pushed', x.pushed, 'unconsumed', x.unconsumed - x.pushed)
  into v_full
  from (
    select q.name, q.max_size,
           (select coalesce(sum(sg.last_offset - sg.first_offset + 1), 0) from queen.segments sg
            join queen.partitions p on p.id = sg.partition_id
            where p.queue_id = q.id and sg.partition_id = any (p_locked) and sg.created_at = p_now) as pushed,
           coalesce((select max(t.messages - g.committed)
                     from (select s.consumer_group, sum(s.committed) as committed from queen.group_stats s
                           where s.queue_id = q.id group by s.consumer_group) g
                     cross join (select sum(s.messages) as messages from queen.queue_stats s where s.queue_id = q.id) t),
                    (select sum(s.messages - s.deleted) from queen.queue_stats s where s.queue_id = q.id)) as unconsumed
    from unnest(p_queues) as n
    cross join lateral (select q.* from queen.queues q where q.name = n and q.max_size > 0 offset 0) q
    -- the conditions below stay out of the subquery: pushed into it, they copied its subplans,
    -- which every call set up twice
    offset 0
  ) x
  where x.pushed > 0 and x.unconsumed > x.max_size
  limit 1;
  return v_full;
end
$$;

-- New cursors seeded above 0 count as committed.
create or replace function queen.push_count_seeded_commits(p_new uuid[]) returns void
language plpgsql as $$
begin
  insert into queen.group_stats as t (queue_id, consumer_group, shard, committed)
  select c.queue_id, c.consumer_group, queen.stats_shard(), sum(c.committed_offset)
  from unnest(p_new) as n(id)
  cross join lateral (select c.* from queen.cursors c where c.partition_id = n.id and c.committed_offset > 0 offset 0) c
  group by c.queue_id, c.consumer_group
  order by c.queue_id, c.consumer_group
  on conflict (queue_id, consumer_group, shard) do update set committed = t.committed + excluded.committed;
end
$$;

-- Other instances' parked pops and the live view learn of the push (how many messages each
-- partition received).
create or replace function queen.push_notify(p_locked uuid[], p_now timestamptz) returns void
language plpgsql as $$
begin
  perform pg_notify('queen_push', queen.bounded(jsonb_build_object(
            'queue', x.queue, 'namespace', x.namespace, 'task', x.task, 'at', queen.iso(p_now), 'pushed', x.pushed)))
  from (
    select q.name as queue, q.namespace, q.task, jsonb_object_agg(p.name, s.last_offset - s.first_offset + 1) as pushed
    from unnest(p_locked) as l(id)
    cross join lateral (select s.* from queen.segments s where s.partition_id = l.id and s.created_at = p_now offset 0) s
    cross join lateral (select p.* from queen.partitions p where p.id = l.id offset 0) p
    cross join lateral (select q.* from queen.queues q where q.id = p.queue_id offset 0) q
    group by q.id, q.name, q.namespace, q.task
  ) x;
end
$$;
