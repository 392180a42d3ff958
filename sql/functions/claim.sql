-- Parked long polls of one scope (issue 18): one statement claims for several of them, in their
-- order of arrival, each with its own lease, batch and partitions budget, until the scope is dry.
-- p_waiters: [{"batch", "partitions", "autoAck", "leaseSeconds", "leaseId", "holder", "subject", "hold"}].
-- (The live view's claim event of a run of autoAck waiters of batch 1 names the first one's holder.)
-- Rows: the messages of waiter n (1-based, in p_waiters' order); a row with hold_ms for a waiter
-- whose under-full batch minPopWaitTime holds back (its claim undone, the next waiter tried);
-- and, when a waiter found nothing (the scope is dry: the rest are not tried), a row of waiter 0
-- whose next_in_ms is how long until something of the scope becomes claimable by time (a lease
-- expiry, a retry delay, a pause's end, delayedProcessing, windowBuffer), null when none is known,
-- and whose contended says that ready rows of the scope remain, which only a lock of another
-- transaction keeps from a dry pop (a claim or an ack elsewhere, which wakes nobody when done).
create or replace function queen.claim_for_waiters(
  p_queue text, p_partition text, p_namespace text, p_task text, p_group text,
  p_subscription_mode text, p_subscription_from timestamptz, p_waiters jsonb)
returns table (waiter integer, hold_ms integer, next_in_ms integer, contended boolean, queue_name text, partition_id uuid, partition_name text,
               id uuid, transaction_id text, trace_id text, payload text, encrypted boolean, producer_sub text,
               created_at text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_len integer := jsonb_array_length(p_waiters);
  v_i integer := 0; -- waiters before this one
  v_w jsonb;
  v_k integer;
  v_count integer;
  v_detail text;
begin
  while v_i < v_len loop
    v_w := p_waiters->v_i;
    v_count := 0;
    if queen.claims_one_autoacked(v_w) then
      -- A run of autoAck waiters of batch 1 is one pop of the run's length: each gets one of its
      -- messages, in the pop's order (nothing of it is leased, so who gets which is free).
      v_k := 1;
      while v_i + v_k < v_len and queen.claims_one_autoacked(p_waiters->(v_i + v_k)) loop
        v_k := v_k + 1;
      end loop;
      return query
      select v_i + r.o::integer, null::integer, null::integer, null::boolean,
             r.queue_name, r.partition_id, r.partition_name, r.id, r.transaction_id, r.trace_id, r.payload,
             r.encrypted, r.producer_sub, r.created_at
      from queen.pop(p_lease_id => (v_w->>'leaseId')::uuid, p_queue => p_queue, p_partition => p_partition,
                     p_namespace => p_namespace, p_task => p_task, p_group => p_group, p_batch => v_k,
                     p_max_partitions => v_k, p_auto_ack => true, p_subscription_mode => p_subscription_mode,
                     p_subscription_from => p_subscription_from, p_holder => v_w->>'holder', p_subject => v_w->>'subject')
           with ordinality as r(queue_name, partition_id, partition_name, id, transaction_id, trace_id, payload,
                                encrypted, producer_sub, created_at, o);
      get diagnostics v_count = row_count;
      v_i := v_i + v_count;
      if v_count = v_k then
        continue;
      end if;
      v_count := 0; -- the waiter after the served ones found nothing
    elsif (v_w->>'hold')::boolean then
      -- only a waiter that may be held pays for the subtransaction that undoes its claim
      begin
        return query
        select v_i + 1, null::integer, null::integer, null::boolean, r.*
        from queen.pop(p_lease_id => (v_w->>'leaseId')::uuid, p_queue => p_queue, p_partition => p_partition,
                       p_namespace => p_namespace, p_task => p_task, p_group => p_group,
                       p_batch => (v_w->>'batch')::integer, p_max_partitions => (v_w->>'partitions')::integer,
                       p_auto_ack => (v_w->>'autoAck')::boolean, p_lease_seconds => (v_w->>'leaseSeconds')::integer,
                       p_subscription_mode => p_subscription_mode, p_subscription_from => p_subscription_from,
                       p_holder => v_w->>'holder', p_hold_under_full => true, p_subject => v_w->>'subject') r;
        get diagnostics v_count = row_count;
      exception when sqlstate 'QM002' then
        get stacked diagnostics v_detail = pg_exception_detail;
        return query select v_i + 1, coalesce(v_detail, '0')::integer, null::integer, null::boolean,
          null::text, null::uuid, null::text, null::uuid, null::text, null::text, null::text, null::boolean, null::text, null::text;
        v_i := v_i + 1;
        continue;
      end;
      v_i := v_i + 1;
    else
      return query
      select v_i + 1, null::integer, null::integer, null::boolean, r.*
      from queen.pop(p_lease_id => (v_w->>'leaseId')::uuid, p_queue => p_queue, p_partition => p_partition,
                     p_namespace => p_namespace, p_task => p_task, p_group => p_group,
                     p_batch => (v_w->>'batch')::integer, p_max_partitions => (v_w->>'partitions')::integer,
                     p_auto_ack => (v_w->>'autoAck')::boolean, p_lease_seconds => (v_w->>'leaseSeconds')::integer,
                     p_subscription_mode => p_subscription_mode, p_subscription_from => p_subscription_from,
                     p_holder => v_w->>'holder', p_hold_under_full => false, p_subject => v_w->>'subject') r;
      get diagnostics v_count = row_count;
      v_i := v_i + 1;
    end if;
    if v_count = 0 then
      return query select 0, null::integer, queen.ms_until(queen.scope_next_claimable(p_queue, p_partition, p_namespace, p_task, p_group)),
        queen.scope_ready(p_queue, p_partition, p_namespace, p_task, p_group, false),
        null::text, null::uuid, null::text, null::uuid, null::text, null::text, null::text, null::boolean, null::text, null::text;
      return;
    end if;
  end loop;
end
$$;

create or replace function queen.claims_one_autoacked(p_waiter jsonb) returns boolean
language sql immutable as $$
  select coalesce((p_waiter->>'autoAck')::boolean, false) and (p_waiter->>'batch')::integer = 1
         and not coalesce((p_waiter->>'hold')::boolean, false)
$$;

-- Milliseconds from now until p_at by the database's clock (an app server's clock may differ).
create or replace function queen.ms_until(p_at timestamptz) returns integer
language sql volatile as $$
  select case when p_at is not null
              then least(greatest(ceil(extract(epoch from (p_at - clock_timestamp())) * 1000), 0), 2147483647)::integer end
$$;

-- The queues of a wait scope: the named one, or those of the discovery filter.
create or replace function queen.scope_queues(p_queue text, p_namespace text, p_task text) returns setof uuid
language sql stable as $$
  select q.id from queen.queues q where p_queue is not null and q.name = p_queue
  union all
  select q.id from queen.queues q
  where p_queue is null and (p_namespace = '' or q.namespace = p_namespace) and (p_task = '' or q.task = p_task)
$$;

-- The next moment after now that a blocked (partition, group) of the scope becomes claimable;
-- null when none is blocked until a known time (a pause without an end waits for its resume).
-- The pop keeps each backlog row's blocked_until: a dry pop has visited every ready row.
create or replace function queen.scope_next_claimable(p_queue text, p_partition text, p_namespace text, p_task text, p_group text)
returns timestamptz
language sql stable set plan_cache_mode = force_custom_plan as $$
  select min(n.at)
  from queen.scope_queues(p_queue, p_namespace, p_task) s(qid)
  cross join lateral (
    select min(b.blocked_until) as at from queen.backlog b
    where b.queue_id = s.qid and b.consumer_group = p_group
      and b.blocked_until > now() and b.blocked_until < 'infinity'
      and (p_partition is null
           or b.partition_id = (select p.id from queen.partitions p where p.queue_id = s.qid and p.name = p_partition))
  ) n
$$;

-- Whether a claim may find something of the scope now: a ready or unblocked backlog row (or,
-- with p_unjoined, a queue of the scope the group has not joined yet).
create or replace function queen.scope_ready(p_queue text, p_partition text, p_namespace text, p_task text, p_group text,
                                             p_unjoined boolean)
returns boolean
language sql stable set plan_cache_mode = force_custom_plan as $$
  select exists (
    select 1 from queen.scope_queues(p_queue, p_namespace, p_task) q(qid)
    where (p_unjoined and not exists (select 1 from queen.queue_groups g where g.queue_id = q.qid and g.consumer_group = p_group))
       or exists (
         select 1 from queen.backlog b
         where b.queue_id = q.qid and b.consumer_group = p_group
           and (b.blocked_until is null or b.blocked_until <= now())
           and (p_partition is null
                or b.partition_id = (select p.id from queen.partitions p where p.queue_id = q.qid and p.name = p_partition))))
$$;

-- The instance-wide re-check of every dry scope at once (p_scopes: [{"queue", "partition",
-- "namespace", "task", "group"}]): per scope (1-based) whether a claim may find something now
-- (a ready or unblocked backlog row, or a queue of the scope the group has not joined yet, or
-- pop maintenance, which the claim answers), and the next moment by time. Reads only; a "ready" that a claim then finds empty costs one claim.
create or replace function queen.recheck_scopes(p_scopes jsonb)
returns table (scope integer, ready boolean, next_in_ms integer)
language sql stable set plan_cache_mode = force_custom_plan as $$
  select x.n::integer,
    -- pop maintenance answers every parked pop at its scope's next re-check: its claim says so
    queen.pop_maintenance() or queen.scope_ready(x.s->>'queue', x.s->>'partition', x.s->>'namespace', x.s->>'task', x.s->>'group', true),
    queen.ms_until(queen.scope_next_claimable(x.s->>'queue', x.s->>'partition', x.s->>'namespace', x.s->>'task', x.s->>'group'))
  from jsonb_array_elements(p_scopes) with ordinality x(s, n)
$$;
