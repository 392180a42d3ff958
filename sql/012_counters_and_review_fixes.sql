-- Counters and columns the storage lifecycle (013) and the operator paths need, and fixes to the
-- functions of 007-010 found in review, as a migration of its own: landed migrations are never
-- edited. The functions below replace their 007-010 definitions whole.

-- ---- columns ------------------------------------------------------------------------------

-- messages deleted before this group consumed them (retention, maxWaitTimeSeconds)
alter table queen.cursors add column evicted bigint not null default 0;
alter table queen.group_stats add column evicted bigint not null default 0;
-- messages the lifecycle job deleted, and the stored payload bytes (pushed minus deleted)
alter table queen.queue_stats add column deleted bigint not null default 0, add column bytes bigint not null default 0;
insert into queen.queue_stats as t (queue_id, shard, bytes)
select p.queue_id, 0, sum(pg_column_size(m.payload))
from queen.messages m join queen.partitions p on p.id = m.partition_id
group by p.queue_id
on conflict (queue_id, shard) do update set bytes = excluded.bytes;

-- When the lifecycle job should look at a partition next: when its oldest message comes of age, or
-- at the run after a look that found it of age but kept (a lagging group, a live lease); null while
-- it stores nothing. A push sets it on a partition that had none.
alter table queen.partitions add column retain_check_at timestamptz;
update queen.partitions p set retain_check_at = now() where exists (select 1 from queen.segments s where s.partition_id = p.id);
create index partitions_retain_check on queen.partitions (queue_id, retain_check_at) where retain_check_at is not null;

-- The counter tables have no foreign keys: a new shard row's key-share lock on its queue, taken
-- while cursors are held, formed deadlock cycles with joins and seeks (which hold the queue row
-- while they wait for cursors). queen.delete_queue() removes them itself.
alter table queen.queue_stats drop constraint queue_stats_queue_id_fkey;
alter table queen.group_stats drop constraint group_stats_queue_id_fkey;

-- ---- functions ----------------------------------------------------------------------------

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

-- push: maxSize refuses a push whole (QM004); stored bytes; retain_check_at set on first store
create or replace function queen.push(p_items jsonb)
returns table (idx integer, transaction_id text, status text, message_id uuid, partition_id uuid,
               trace_id text, queue_name text, namespace text, task text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queues text[] := array(select distinct e->>'queue' from jsonb_array_elements(p_items) e);
  v_now timestamptz;
  v_attempt integer := 0;
  v_qids uuid[];
  v_pnames text[];
  v_new uuid[];
  v_locked uuid[];
  v_full jsonb;
begin
  -- A queue deleted concurrently is created again, as a push after the delete would. Holding a
  -- key-share lock on each queue row (in id order, as joins lock them) keeps queen.delete_queue()
  -- and group joins out until this push commits.
  loop
    v_attempt := v_attempt + 1;
    perform queen.ensure_queues(v_queues);
    exit when (select count(*) from (select 1 from queen.queues q where q.name = any (v_queues) order by q.id for key share) l)
              = cardinality(v_queues);
    if v_attempt >= 3 then
      raise exception 'push: queues % keep disappearing', v_queues;
    end if;
  end loop;

  -- The distinct (queue, partition) pairs of the call, as two arrays read side by side: every
  -- lookup below then matches both columns of partitions' unique index from one relation.
  select array_agg(q.id order by q.id, k.p), array_agg(k.p order by q.id, k.p) into v_qids, v_pnames
  from (select distinct e->>'queue' as q, e->>'partition' as p from jsonb_array_elements(p_items) e) k
  join queen.queues q on q.name = k.q;

  with created as (
    insert into queen.partitions (id, queue_id, name)
    select queen.uuidv7(), k.qid, k.pname
    from unnest(v_qids, v_pnames) as k(qid, pname)
    where not exists (select 1 from queen.partitions x where x.queue_id = k.qid and x.name = k.pname)
    on conflict (queue_id, name) do nothing
    returning id)
  select array_agg(id) into v_new from created;

  -- Lock in id order so that concurrent multi-partition pushes cannot deadlock.
  v_locked := array(
    select p.id
    from unnest(v_qids, v_pnames) as k(qid, pname)
    join queen.partitions p on p.queue_id = k.qid and p.name = k.pname
    order by p.id
    for no key update of p);
  if cardinality(v_locked) = 0 then
    raise exception 'push: partitions not found';
  end if;

  -- Pushes to a queue with maxSize go one at a time, so that the check below sees every other one.
  perform 1 from queen.queues q where q.name = any (v_queues) and q.max_size > 0 order by q.id for no key update;

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
  with parts as materialized (
    select p.id as pid, p.name as pname, p.head_offset, q.name as qname, q.namespace, q.task
    from queen.partitions p
    join queen.queues q on q.id = p.queue_id
    where p.id = any (v_locked)
  ),
  items as (
    select (t.ord - 1)::integer as idx, x.qname as queue_name, x.namespace, x.task,
           x.pid, x.head_offset,
           t.e->>'transactionId' as txid, (t.e->>'messageId')::uuid as mid,
           t.e->'payload' as payload, coalesce((t.e->>'encrypted')::boolean, false) as encrypted,
           t.e->>'producerSub' as producer_sub, t.e->>'traceId' as trace_id
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
    join parts x on x.qname = t.e->>'queue' and x.pname = t.e->>'partition'
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
    set head_offset = h.last_off, last_push_at = v_now, retain_check_at = coalesce(p.retain_check_at, v_now)
    from (select a.pid, max(a.off) as last_off from accepted a group by a.pid) h
    where p.id = h.pid
  )
  select j.idx, j.txid,
         case when j.stored_id is null and j.first_idx = j.idx then 'queued' else 'duplicate' end,
         coalesce(j.stored_id, j.first_mid), j.pid,
         case when j.stored_id is null and j.first_idx = j.idx then j.trace_id
              else null end,
         j.queue_name, j.namespace, j.task
  from judged j
  order by j.idx;

  -- A new partition gets a cursor for each group of its queue, at the group's seed (0, unless a
  -- subscription starts after this push).
  if v_new is not null then
    insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, seeded)
    select p.id, g.consumer_group, p.queue_id,
           coalesce((select s.first_offset - 1 from queen.segments s
                     where s.partition_id = p.id and s.created_at >= sub.start_at
                     order by s.created_at, s.first_offset limit 1),
                    case when sub.start_at is null then 0 else p.head_offset end),
           true
    from queen.partitions p
    join queen.queue_groups g on g.queue_id = p.queue_id
    left join queen.subscriptions sub
      on sub.queue_id = p.queue_id and sub.consumer_group = g.consumer_group and g.consumer_group <> '__QUEUE_MODE__'
    where p.id = any (v_new)
    on conflict do nothing;
  end if;

  -- Every group now has something above its cursor on the partitions that received messages.
  insert into queen.backlog (partition_id, consumer_group, queue_id, last_claim_at, pending_since)
  select c.partition_id, c.consumer_group, c.queue_id, coalesce(c.last_claim_at, '-infinity'), v_now
  from queen.segments s
  join queen.cursors c on c.partition_id = s.partition_id
  where s.partition_id = any (v_locked) and s.created_at = v_now and c.committed_offset < s.last_offset
  on conflict do nothing;

  insert into queen.queue_stats as t (queue_id, shard, partitions, messages, bytes)
  select p.queue_id, queen.stats_shard(), count(*) filter (where p.id = any (coalesce(v_new, '{}'))),
         coalesce(sum(s.last_offset - s.first_offset + 1), 0),
         coalesce(sum((select sum(pg_column_size(m.payload)) from queen.messages m
                       where m.partition_id = s.partition_id and m."offset" between s.first_offset and s.last_offset)), 0)
  from queen.partitions p
  left join queen.segments s on s.partition_id = p.id and s.created_at = v_now
  where p.id = any (v_locked)
  group by p.queue_id
  order by p.queue_id
  on conflict (queue_id, shard) do update
    set partitions = t.partitions + excluded.partitions, messages = t.messages + excluded.messages, bytes = t.bytes + excluded.bytes;

  -- maxSize: a push that took a queue's unconsumed messages (the most behind group's lag; with no
  -- group, every stored message) above it is refused whole (this raise undoes it).
  select jsonb_build_object('queue', x.name, 'maxSize', x.max_size, 'pushed', x.pushed, 'unconsumed', x.unconsumed - x.pushed)
  into v_full
  from (
    select q.name, q.max_size,
           (select coalesce(sum(sg.last_offset - sg.first_offset + 1), 0) from queen.segments sg
            join queen.partitions p on p.id = sg.partition_id
            where p.queue_id = q.id and sg.partition_id = any (v_locked) and sg.created_at = v_now) as pushed,
           coalesce((select max(t.messages - g.committed)
                     from (select s.consumer_group, sum(s.committed) as committed from queen.group_stats s
                           where s.queue_id = q.id group by s.consumer_group) g
                     cross join (select sum(s.messages) as messages from queen.queue_stats s where s.queue_id = q.id) t),
                    (select sum(s.messages - s.deleted) from queen.queue_stats s where s.queue_id = q.id)) as unconsumed
    from queen.queues q
    where q.name = any (v_queues) and q.max_size > 0
  ) x
  where x.pushed > 0 and x.unconsumed > x.max_size
  limit 1;
  if v_full is not null then
    raise exception 'queue % is full', v_full->>'queue' using errcode = 'QM004', detail = v_full::text;
  end if;

  -- New cursors seeded above 0 count as committed.
  if v_new is not null then
    insert into queen.group_stats as t (queue_id, consumer_group, shard, committed)
    select c.queue_id, c.consumer_group, queen.stats_shard(), sum(c.committed_offset)
    from queen.cursors c
    where c.partition_id = any (v_new) and c.committed_offset > 0
    group by c.queue_id, c.consumer_group
    order by c.queue_id, c.consumer_group
    on conflict (queue_id, consumer_group, shard) do update set committed = t.committed + excluded.committed;
  end if;

  -- Other instances' parked pops and the live view learn of the push (how many messages each
  -- partition received), when there are any.
  if queen.notify_wanted(false) then
    perform pg_notify('queen_push', queen.bounded(jsonb_build_object(
              'queue', x.queue, 'namespace', x.namespace, 'task', x.task, 'at', queen.iso(v_now), 'pushed', x.pushed)))
    from (
      select q.name as queue, q.namespace, q.task, jsonb_object_agg(p.name, s.last_offset - s.first_offset + 1) as pushed
      from queen.segments s
      join queen.partitions p on p.id = s.partition_id
      join queen.queues q on q.id = p.queue_id
      where s.partition_id = any (v_locked) and s.created_at = v_now
      group by q.id
    ) x;
  end if;
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

-- ack: a failure that only dead-lettered sets no retry delay
create or replace function queen.ack(p_items jsonb, p_group text)
returns table (idx integer, transaction_id text, success boolean, error text, queue_name text,
               partition_name text, lease_released boolean, dlq boolean)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_rows jsonb;
  v_cursors jsonb;
begin
  -- Lock every cursor involved, in one global order, before reading any of them.
  perform 1 from queen.cursors c
  where (c.partition_id, c.consumer_group) in (
    select (e->>'partitionId')::uuid, coalesce(e->>'consumerGroup', p_group, '__QUEUE_MODE__')
    from jsonb_array_elements(p_items) e)
  order by c.partition_id, c.consumer_group
  for update;

  with items as (
    select (t.ord - 1)::integer as idx, t.e->>'transactionId' as txid, (t.e->>'partitionId')::uuid as pid,
           coalesce(t.e->>'status', 'completed') as status, t.e->>'error' as err, (t.e->>'leaseId')::uuid as lease,
           coalesce(t.e->>'consumerGroup', p_group, '__QUEUE_MODE__') as grp
    from jsonb_array_elements(p_items) with ordinality as t(e, ord)
  ),
  -- By transaction id alone, so that only the (transaction_id, partition_id) index fits.
  stored as materialized (
    select m.partition_id, m.transaction_id, m."offset"
    from queen.messages m
    where m.transaction_id = any (array(select distinct i.txid from items i))
  ),
  judged as (
    select i.*, m."offset" as off, p.name as pname, q.name as qname, q.retry_limit, q.retry_delay,
           c.lease_id as live_lease,
           case
             when m."offset" is null then 'Message not found'
             when m."offset" <= coalesce(c.committed_offset, 0) or m."offset" = any (c.acked_offsets) then null
             when c.lease_id is null or c.lease_expires_at <= now() or m."offset" > c.lease_end_offset
                  or i.lease <> c.lease_id then 'Invalid or expired lease'
           end as problem,
           -- the item changes something: inside the live lease and not already done
           m."offset" is not null and m."offset" > coalesce(c.committed_offset, 0)
             and not coalesce(m."offset" = any (c.acked_offsets), false)
             and c.lease_id is not null and c.lease_expires_at > now() and m."offset" <= c.lease_end_offset
             and (i.lease is null or i.lease = c.lease_id) as acts
    from items i
    left join stored m on m.transaction_id = i.txid and m.partition_id = i.pid
    left join queen.partitions p on p.id = i.pid
    left join queen.queues q on q.id = p.queue_id
    left join queen.cursors c on c.partition_id = i.pid and c.consumer_group = i.grp
  ),
  failures as (
    insert into queen.message_attempts as a (partition_id, consumer_group, "offset", deliveries, failures, last_error, last_failed_at)
    select j.pid, j.grp, j.off, 1, count(*), (array_agg(j.err order by j.idx desc))[1], now()
    from judged j
    where j.acts and j.status = 'failed'
    group by j.pid, j.grp, j.off
    on conflict (partition_id, consumer_group, "offset") do update
      set failures = a.failures + excluded.failures, last_error = excluded.last_error, last_failed_at = now()
    returning a.partition_id, a.consumer_group, a."offset", a.failures, a.last_error
  ),
  dead as (
    insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
    select f.partition_id, f.consumer_group, f."offset", f.last_error, f.failures
    from failures f
    join (select distinct j.pid, j.grp, j.off, j.retry_limit from judged j where j.acts) j
      on j.pid = f.partition_id and j.grp = f.consumer_group and j.off = f."offset"
    where f.failures > j.retry_limit
    -- dead-lettered before a seek replayed it: it dies again, and the cursor moves past it again
    on conflict (partition_id, consumer_group, "offset") do update
      set error_message = excluded.error_message, retry_count = excluded.retry_count, failed_at = now()
    returning partition_id, consumer_group, "offset"
  ),
  per_cursor as (
    select j.pid, j.grp, bool_or(j.status = 'failed') as failed, max(j.retry_delay) as retry_delay,
           count(*) filter (where j.status = 'failed') as n_failed,
           array_agg(j.off) filter (where j.status <> 'failed') as completed
    from judged j
    where j.acts
    group by j.pid, j.grp
  ),
  next_state as (
    select pc.*, adv.committed, adv.done, c.lease_end_offset, c.committed_offset as old_committed, c.queue_id,
           (select count(*) from dead d where d.partition_id = pc.pid and d.consumer_group = pc.grp) as n_dead
    from per_cursor pc
    join queen.cursors c on c.partition_id = pc.pid and c.consumer_group = pc.grp
    cross join lateral queen.advance(
      c.committed_offset,
      c.acked_offsets || coalesce(pc.completed, '{}')
        || array(select d."offset" from dead d where d.partition_id = pc.pid and d.consumer_group = pc.grp)) adv
  ),
  updated as (
    update queen.cursors c set
      committed_offset = n.committed,
      acked_offsets = n.done,
      lease_id = case when n.released then null else c.lease_id end,
      lease_end_offset = case when n.released then null else c.lease_end_offset end,
      lease_acquired_at = case when n.released then null else c.lease_acquired_at end,
      lease_expires_at = case when n.released then null else c.lease_expires_at end,
      lease_seconds = case when n.released then null else c.lease_seconds end,
      lease_holder = case when n.released then null else c.lease_holder end,
      lease_extensions = case when n.released then 0 else c.lease_extensions end,
      -- the retry delay holds back a redelivery; a failure that only dead-lettered has none
      retry_not_before = case when n.n_failed > n.n_dead then now() + make_interval(secs => n.retry_delay / 1000.0) else c.retry_not_before end,
      failures = c.failures + n.n_failed,
      dead_letters = c.dead_letters + n.n_dead,
      last_ack_at = now()
    from (select s.*, s.failed or s.committed >= s.lease_end_offset as released from next_state s) n
    where c.partition_id = n.pid and c.consumer_group = n.grp
    returning c.partition_id, c.consumer_group, n.released, n.queue_id, n.old_committed, n.committed, n.n_failed, n.n_dead
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'idx', j.idx, 'txid', j.txid, 'problem', j.problem, 'qname', j.qname, 'pname', j.pname,
           'pid', j.pid, 'grp', j.grp, 'status', j.status, 'acts', j.acts,
           'released', coalesce(j.acts and u.released, false),
           'dlq', coalesce(j.status = 'failed' and exists (
             select 1 from dead d where d.partition_id = j.pid and d.consumer_group = j.grp and d."offset" = j.off), false))
           order by j.idx), '[]'),
         (select coalesce(jsonb_agg(to_jsonb(x)), '[]') from updated x)
  into v_rows, v_cursors
  from judged j
  left join updated u on u.partition_id = j.pid and u.consumer_group = j.grp;

  return query
  select (r->>'idx')::integer, r->>'txid', r->>'problem' is null, r->>'problem', r->>'qname', r->>'pname',
         (r->>'released')::boolean, (r->>'dlq')::boolean
  from jsonb_array_elements(v_rows) r;

  if jsonb_array_length(v_cursors) = 0 then
    return;
  end if;

  -- The backlog rows follow their cursors: a released lease unblocks (or a retry delay blocks),
  -- a moved cursor moves the oldest pending time, and a drained partition leaves.
  update queen.backlog b set
    blocked_until = queen.cursor_block(c),
    pending_since = case when (x->>'committed')::bigint > (x->>'old_committed')::bigint
                         then queen.pending_since(c.partition_id, c.committed_offset) else b.pending_since end
  from jsonb_array_elements(v_cursors) x
  join queen.cursors c on c.partition_id = (x->>'partition_id')::uuid and c.consumer_group = x->>'consumer_group'
  where b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  perform queen.drop_drained(c.partition_id, c.consumer_group, c.committed_offset)
  from jsonb_array_elements(v_cursors) x
  join queen.cursors c on c.partition_id = (x->>'partition_id')::uuid and c.consumer_group = x->>'consumer_group'
  join queen.partitions p on p.id = c.partition_id
  where p.head_offset <= c.committed_offset;

  perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', x->'queue_id', 'group', x->'consumer_group',
            'committed', (x->>'committed')::bigint - (x->>'old_committed')::bigint,
            'failures', x->'n_failed', 'deadLetters', x->'n_dead')))
  from jsonb_array_elements(v_cursors) x
  where (x->>'committed')::bigint > (x->>'old_committed')::bigint or (x->>'n_failed')::bigint > 0;

  if queen.notify_wanted(true) then
    -- The live view: one event per cursor the call changed.
    perform queen.emit(jsonb_build_object('type', 'ack', 'queue', min(r->>'qname'), 'partition', min(r->>'pname'),
        'partitionId', r->>'pid', 'group', r->>'grp',
        'completed', count(*) filter (where r->>'status' <> 'failed'),
        'failed', count(*) filter (where r->>'status' = 'failed'),
        'deadLettered', count(*) filter (where (r->>'dlq')::boolean),
        'leaseReleased', bool_or((r->>'released')::boolean)))
    from jsonb_array_elements(v_rows) r
    where (r->>'acts')::boolean
    group by r->>'pid', r->>'grp';
  end if;

  if queen.notify_wanted(false) then
    -- A released lease leaves its span claimable again: wake the pops parked on its queue.
    perform queen.notify_claimable(x.queue_id)
    from (select distinct (u->>'queue_id')::uuid as queue_id from jsonb_array_elements(v_cursors) u
          join queen.cursors c on c.partition_id = (u->>'partition_id')::uuid and c.consumer_group = u->>'consumer_group'
          join queen.partitions p on p.id = c.partition_id
          where (u->>'released')::boolean and p.head_offset > c.committed_offset) x;
  end if;
end
$$;

-- release_lease: an expired lease counts as an expiry; a refused release writes no audit row
create or replace function queen.release_lease(p_lease_id uuid, p_reason text, p_actor text)
returns table (partition_id uuid, consumer_group text, queue_name text, partition_name text)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_released jsonb;
begin
  with locked as (
    select c.partition_id, c.consumer_group, c.queue_id, c.lease_expires_at <= now() as expired from queen.cursors c
    where c.lease_id = p_lease_id
    order by c.partition_id, c.consumer_group
    for update
  ),
  released as (
    update queen.cursors c set lease_id = null, lease_end_offset = null, lease_acquired_at = null,
      lease_expires_at = null, lease_seconds = null, lease_holder = null, lease_extensions = 0,
      -- an expired lease nobody reclaimed yet is counted as an expiry, as a reclaim would count it
      lease_expiries = c.lease_expiries + case when l.expired then 1 else 0 end
    from locked l where c.partition_id = l.partition_id and c.consumer_group = l.consumer_group
    returning c.partition_id, c.consumer_group, l.expired
  )
  select jsonb_agg(jsonb_build_object('partitionId', r.partition_id, 'group', r.consumer_group, 'queue', q.name,
                                      'partition', p.name, 'queueId', q.id, 'expired', r.expired))
  into v_released
  from released r join queen.partitions p on p.id = r.partition_id join queen.queues q on q.id = p.queue_id;

  -- a release of no lease is refused (404) and writes nothing, not even an audit row
  if v_released is null then
    return;
  end if;
  perform queen.audit(p_actor, 'lease.release', 'lease', p_lease_id::text, p_reason, 'released');
  update queen.backlog b set blocked_until = queen.cursor_block(c)
  from jsonb_array_elements(v_released) r
  join queen.cursors c on c.partition_id = (r->>'partitionId')::uuid and c.consumer_group = r->>'group'
  where b.partition_id = c.partition_id and b.consumer_group = c.consumer_group;
  perform queen.add_group_stats(jsonb_agg(jsonb_build_object('queue', r->'queueId', 'group', r->'group', 'leaseExpiries', 1)))
  from jsonb_array_elements(v_released) r
  where (r->>'expired')::boolean;
  perform queen.emit(jsonb_build_object('type', 'release', 'leaseId', p_lease_id, 'reason', p_reason,
    'actor', p_actor, 'partitions', v_released));
  perform queen.notify_claimable(q) from (select distinct (r->>'queueId')::uuid as q from jsonb_array_elements(v_released) r) x;

  return query
  select (r->>'partitionId')::uuid, r->>'group', r->>'queue', r->>'partition' from jsonb_array_elements(v_released) r;
end
$$;

-- reseed: every cursor of the group is locked first
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

-- delete_consumer_group: backlog through backlog_oldest's key; deleted everywhere ends scope subscriptions
create or replace function queen.delete_consumer_group(p_group text, p_queue text, p_delete_metadata boolean, p_reason text, p_actor text)
returns integer
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queues uuid[];
  v_count integer;
begin
  v_queues := array(
    select q.id from queen.queues q
    where (p_queue is null or q.name = p_queue)
      and exists (select 1 from queen.queue_groups g where g.queue_id = q.id and g.consumer_group = p_group)
    order by q.id
    for update);
  delete from queen.message_attempts a using queen.cursors c
  where c.queue_id = any (v_queues) and c.consumer_group = p_group
    and a.partition_id = c.partition_id and a.consumer_group = p_group;
  delete from queen.dead_letters d using queen.cursors c
  where c.queue_id = any (v_queues) and c.consumer_group = p_group
    and d.partition_id = c.partition_id and d.consumer_group = p_group;
  delete from queen.cursors c where c.queue_id = any (v_queues) and c.consumer_group = p_group;
  get diagnostics v_count = row_count;
  delete from queen.backlog b
  where (b.queue_id::text || '/' || b.consumer_group) in (select q::text || '/' || p_group from unnest(v_queues) q);
  delete from queen.group_stats s where s.queue_id = any (v_queues) and s.consumer_group = p_group;
  delete from queen.queue_groups g where g.queue_id = any (v_queues) and g.consumer_group = p_group;
  if p_delete_metadata then
    delete from queen.subscriptions s using queen.queues q
    where s.queue_id = q.id and s.consumer_group = p_group and (p_queue is null or q.name = p_queue);
    -- deleted everywhere: queues created later no longer adopt it
    delete from queen.scope_subscriptions s where p_queue is null and s.consumer_group = p_group;
  end if;
  perform queen.audit(p_actor, 'consumer_group.delete', 'consumer_group', coalesce(p_group || '@' || p_queue, p_group),
    p_reason, 'ok', jsonb_build_object('deletedPartitions', v_count, 'metadataDeleted', p_delete_metadata));
  return v_count;
end
$$;

-- configure_queue: only a new queue adopts scope subscriptions; a reconfigure re-checks retention
create or replace function queen.configure_queue(p_name text, p_namespace text, p_task text, p_options jsonb)
returns table (queue_id uuid, partition_id uuid, options jsonb)
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
declare
  v_queue queen.queues;
  v_partition uuid;
  v_created boolean;
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
  v_created := v_queue.created_at = now(); -- inserted by this statement, not updated

  insert into queen.partitions (id, queue_id, name)
  values (queen.uuidv7(), v_queue.id, 'Default')
  on conflict (queue_id, name) do nothing
  returning id into v_partition;
  if v_partition is not null then
    insert into queen.cursors (partition_id, consumer_group, queue_id, seeded)
    select v_partition, g.consumer_group, v_queue.id, true from queen.queue_groups g where g.queue_id = v_queue.id;
    insert into queen.queue_stats as t (queue_id, shard, partitions) values (v_queue.id, queen.stats_shard(), 1)
    on conflict (queue_id, shard) do update set partitions = t.partitions + 1;
  else
    select p.id into v_partition from queen.partitions p where p.queue_id = v_queue.id and p.name = 'Default';
  end if;

  if v_created then
    perform queen.adopt_scope_subscriptions(v_queue.id);
  else
    -- the lifecycle options may have changed: the job looks at every partition again (013)
    update queen.partitions p set retain_check_at = now() where p.queue_id = v_queue.id and p.retain_check_at > now();
  end if;
  perform pg_notify('queen_config', v_queue.name);
  return query select v_queue.id, v_partition, queen.queue_options(v_queue);
end
$$;

-- delete_queue: the counter rows too (no foreign keys)
create or replace function queen.delete_queue(p_name text) returns boolean
language plpgsql set plan_cache_mode = force_custom_plan set enable_seqscan = off set jit = off as $$
declare
  v_queue uuid;
begin
  select id into v_queue from queen.queues where name = p_name for update;
  if not found then
    return false;
  end if;
  delete from queen.messages where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.segments where partition_id in (select id from queen.partitions where queue_id = v_queue);
  delete from queen.backlog b
  where (b.queue_id::text || '/' || b.consumer_group) in
        (select g.queue_id::text || '/' || g.consumer_group from queen.queue_groups g where g.queue_id = v_queue);
  delete from queen.cursors where queue_id = v_queue;
  delete from queen.queue_stats where queue_id = v_queue;
  delete from queen.group_stats where queue_id = v_queue;
  delete from queen.queues where id = v_queue;
  return true;
end
$$;

-- figures with stored messages, bytes and evictions: new result columns, so dropped and created
drop function queen.group_figures();
drop function queen.queue_figures();

-- messages: ever pushed; stored: still held (pushed minus what the lifecycle job deleted).
create function queen.queue_figures()
returns table (queue_id uuid, partitions bigint, messages bigint, stored bigint, bytes bigint)
language sql stable as $$
  select s.queue_id, sum(s.partitions)::bigint, sum(s.messages)::bigint, sum(s.messages - s.deleted)::bigint, sum(s.bytes)::bigint
  from queen.queue_stats s
  group by s.queue_id
$$;

create function queen.group_figures()
returns table (queue_id uuid, consumer_group text, partitions bigint, messages bigint, committed bigint, lag bigint,
               oldest_pending timestamptz, redeliveries bigint, lease_expiries bigint, failures bigint, dead_letters bigint,
               evicted bigint)
language sql stable as $$
  select g.queue_id, g.consumer_group, coalesce(qf.partitions, 0), coalesce(qf.messages, 0), gs.committed,
         greatest(coalesce(qf.messages, 0) - gs.committed, 0),
         (select min(b.pending_since) from queen.backlog b
          where (b.queue_id::text || '/' || b.consumer_group) = (g.queue_id::text || '/' || g.consumer_group)),
         gs.redeliveries, gs.lease_expiries, gs.failures, gs.dead_letters, gs.evicted
  from queen.queue_groups g
  left join queen.queue_figures() qf on qf.queue_id = g.queue_id
  cross join lateral (
    select coalesce(sum(s.committed), 0)::bigint as committed, coalesce(sum(s.redeliveries), 0)::bigint as redeliveries,
           coalesce(sum(s.lease_expiries), 0)::bigint as lease_expiries, coalesce(sum(s.failures), 0)::bigint as failures,
           coalesce(sum(s.dead_letters), 0)::bigint as dead_letters, coalesce(sum(s.evicted), 0)::bigint as evicted
    from queen.group_stats s
    where s.queue_id = g.queue_id and s.consumer_group = g.consumer_group) gs
$$;
