-- messages: ever pushed; stored: still held (pushed minus what the lifecycle job deleted).
create or replace function queen.queue_figures()
returns table (queue_id uuid, partitions bigint, messages bigint, stored bigint, bytes bigint)
language sql stable as $$
  select s.queue_id, sum(s.partitions)::bigint, sum(s.messages)::bigint, sum(s.messages - s.deleted)::bigint, sum(s.bytes)::bigint
  from queen.queue_stats s
  group by s.queue_id
$$;

create or replace function queen.group_figures()
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

-- The books a change of a cursor keeps, in one trigger (sql/035), so that a claim or an ack pays
-- one call:
-- * The deliveries history (sql/024): a claim opens a row, the end of its lease closes it with how
--   it ended. A function that ends a lease for a reason of its own says so in `queen.lease_end`
--   (transaction-local); otherwise the change tells: a new claim over it (pops reclaim only
--   expired leases), a failure counted, an ack that completed it, a cursor moved (a seek, a
--   delete), else a force release.
-- * Delivered and acked per (queue, group), in this backend's row of queen.delivery_stats (015):
--   a pop changes `deliveries`, an ack sets `last_ack_at`. Seeks, re-seeds and the lifecycle
--   job's evictions move cursors too, but touch neither column, so they count nothing. Acked is
--   what the change made done: the stored messages its committed offset passed that were not done
--   already, and the offsets newly acked above it, minus what it dead-lettered. An offset passed
--   whose message is gone (removed by the lifecycle job past a live lease, deleted one by one) is
--   no ack: it was counted as evicted when it went.
-- * The acks, failures and expiries of the holder of the lease the change acts on or ends (OLD),
--   in queen.holder_stats (019). Claims are not counted there (the page shows what a holder holds
--   now from the cursors); what a claim completes (autoAck) takes no lease, so it is nobody's, not
--   even that of the holder whose expired lease the claim ends. A lease an operator ended
--   (released, or a message on it set aside) counts as released: Consumers keeps such a holder
--   for the hour it counts.
-- * The holders seen claiming for the group (queen.group_members): the page lists those of the
--   last hour, so a holder's row is written at most once a second per connection, not per claim.
create or replace function queen.cursor_bookkeeping() returns trigger
language plpgsql as $$
declare
  v_acked bigint;
  v_failed bigint := new.failures - old.failures;
  v_expired bigint := new.lease_expiries - old.lease_expiries;
  v_ended text;
begin
  if new.deliveries <> old.deliveries or new.last_ack_at is distinct from old.last_ack_at or v_expired <> 0 then
    v_acked := 0;
    if new.committed_offset > old.committed_offset then
      select count(*) into v_acked from queen.messages m
      where m.partition_id = new.partition_id
        and m."offset" > old.committed_offset and m."offset" <= new.committed_offset
        and not (m."offset" = any (old.acked_offsets));
    end if;
    v_acked := greatest(v_acked
                        + (select count(*) from unnest(new.acked_offsets) x where not (x = any (old.acked_offsets)))
                        - (new.dead_letters - old.dead_letters), 0);
  end if;

  if new.deliveries <> old.deliveries or new.last_ack_at is distinct from old.last_ack_at then
    insert into queen.delivery_stats as t (queue_id, consumer_group, backend, delivered, acked)
    values (new.queue_id, new.consumer_group, pg_backend_pid(), new.deliveries - old.deliveries, v_acked)
    on conflict (queue_id, consumer_group, backend) do update
      set delivered = t.delivered + excluded.delivered, acked = t.acked + excluded.acked;
  end if;

  if old.lease_holder is not null and (new.last_ack_at is distinct from old.last_ack_at or v_expired <> 0) then
    if new.deliveries > old.deliveries then
      v_acked := 0;
    end if;
    if v_acked > 0 or v_failed > 0 or v_expired > 0 then
      insert into queen.holder_stats as t (minute, holder, backend, acked, failed, expired, last_seen_at)
      values (date_trunc('minute', now()), old.lease_holder, pg_backend_pid(), v_acked, v_failed, v_expired,
              case when v_acked > 0 or v_failed > 0 then now() else old.lease_acquired_at end)
      on conflict (minute, holder, backend) do update
        set acked = t.acked + excluded.acked, failed = t.failed + excluded.failed, expired = t.expired + excluded.expired,
            last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at);
    end if;
  end if;

  if old.lease_id is not null and (new.lease_id is distinct from old.lease_id or new.deliveries <> old.deliveries) then
    v_ended := coalesce(nullif(current_setting('queen.lease_end', true), ''), case
      when new.deliveries <> old.deliveries then 'expired'
      when new.failures > old.failures then 'failed'
      when new.last_ack_at = now() and new.committed_offset >= old.lease_end_offset then 'acked'
      when new.committed_offset is distinct from old.committed_offset then 'moved'
      else 'released' end);
    update queen.deliveries d set
      ended_at = now(), expires_at = old.lease_expires_at, extensions = old.lease_extensions, ended = v_ended
    where d.lease_id = old.lease_id and d.ended_at is null
      and d.partition_id = old.partition_id and d.consumer_group = old.consumer_group;
    if v_ended in ('released', 'dead-lettered', 'skipped') and old.lease_holder is not null then
      insert into queen.holder_stats as t (minute, holder, backend, released, last_seen_at)
      values (date_trunc('minute', now()), old.lease_holder, pg_backend_pid(), 1, old.lease_acquired_at)
      on conflict (minute, holder, backend) do update
        set released = t.released + 1, last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at);
    end if;
  elsif new.lease_id is not null and new.lease_extensions > old.lease_extensions then
    update queen.deliveries d set extended_at = now(), extensions = new.lease_extensions, expires_at = new.lease_expires_at
    where d.lease_id = new.lease_id and d.ended_at is null
      and d.partition_id = new.partition_id and d.consumer_group = new.consumer_group;
  end if;

  if new.deliveries > old.deliveries then
    insert into queen.deliveries (partition_id, consumer_group, lease_id, from_offset, to_offset, holder, claimed_at,
                                  expires_at, extensions, ended_at, ended)
    values (new.partition_id, new.consumer_group, new.lease_id, old.committed_offset + 1,
            coalesce(new.lease_end_offset, new.committed_offset), new.lease_holder, now(),
            new.lease_expires_at, 0,
            -- autoAck: committed as it was delivered
            case when new.lease_id is null then now() end, case when new.lease_id is null then 'auto-acked' end);
    if new.lease_holder is not null and not exists (
         select 1 from queen.group_members m
         where m.queue_id = new.queue_id and m.consumer_group = new.consumer_group and m.holder = new.lease_holder
           and m.backend = pg_backend_pid() and m.seen_at > now() - interval '1 second') then
      insert into queen.group_members as t (queue_id, consumer_group, holder, backend, seen_at)
      values (new.queue_id, new.consumer_group, new.lease_holder, pg_backend_pid(), now())
      on conflict (queue_id, consumer_group, holder, backend) do update set seen_at = excluded.seen_at;
    end if;
  end if;
  return null;
end
$$;

-- Folds the rows of backends that have ended into backend 0, and drops those of deleted groups
-- and queues. One instance at a time; another one calling meanwhile skips.
create or replace function queen.fold_delivery_stats() returns void
language plpgsql as $$
begin
  if not pg_try_advisory_xact_lock(hashtext('queen.fold_delivery_stats')) then
    return;
  end if;
  delete from queen.delivery_stats d
  where not exists (select 1 from queen.queue_groups g where g.queue_id = d.queue_id and g.consumer_group = d.consumer_group);
  with gone as (
    delete from queen.delivery_stats d
    where d.backend <> 0 and not exists (select 1 from pg_stat_activity a where a.pid = d.backend)
    returning d.queue_id, d.consumer_group, d.delivered, d.acked)
  insert into queen.delivery_stats as t (queue_id, consumer_group, backend, delivered, acked)
  select g.queue_id, g.consumer_group, 0, sum(g.delivered), sum(g.acked)
  from gone g
  group by g.queue_id, g.consumer_group
  order by g.queue_id, g.consumer_group
  on conflict (queue_id, consumer_group, backend) do update
    set delivered = t.delivered + excluded.delivered, acked = t.acked + excluded.acked;
end
$$;

-- One row per queue (consumer_group null: messages pushed) and one per (queue, group). Leases and
-- pauses are counted through the cursors' partial indexes: the cost follows the leases held and the
-- cursors paused, not the partitions.
create or replace function queen.metric_figures()
returns table (queue text, consumer_group text, pushed bigint, delivered bigint, acked bigint, failed bigint,
               dead_lettered bigint, lag bigint, lag_seconds double precision, live_leases bigint,
               expired_leases bigint, paused bigint)
language plpgsql stable set enable_seqscan = off set jit = off as $$
#variable_conflict use_column
begin
  return query
  with leases as (
    select c.queue_id, c.consumer_group,
           count(*) filter (where c.lease_expires_at > now()) as live,
           count(*) filter (where c.lease_expires_at <= now()) as expired
    from queen.cursors c
    where c.lease_id is not null
    group by c.queue_id, c.consumer_group),
  pauses as (
    select c.queue_id, c.consumer_group, count(*) as n
    from queen.cursors c
    where c.paused and (c.paused_until is null or c.paused_until > now())
    group by c.queue_id, c.consumer_group),
  deliveries as (
    select d.queue_id, d.consumer_group, sum(d.delivered)::bigint as delivered, sum(d.acked)::bigint as acked
    from queen.delivery_stats d
    group by d.queue_id, d.consumer_group)
  select q.name, null::text, coalesce(qf.messages, 0), null::bigint, null::bigint, null::bigint, null::bigint,
         null::bigint, null::double precision, null::bigint, null::bigint, null::bigint
  from queen.queues q
  left join queen.queue_figures() qf on qf.queue_id = q.id
  union all
  select q.name, g.consumer_group, null, coalesce(d.delivered, 0), coalesce(d.acked, 0), g.failures, g.dead_letters,
         g.lag, case when g.lag > 0 and g.oldest_pending is not null
                     then greatest(extract(epoch from now() - g.oldest_pending), 0)::double precision else 0 end,
         coalesce(l.live, 0), coalesce(l.expired, 0), coalesce(p.n, 0)
  from queen.group_figures() g
  join queen.queues q on q.id = g.queue_id
  left join deliveries d on d.queue_id = g.queue_id and d.consumer_group = g.consumer_group
  left join leases l on l.queue_id = g.queue_id and l.consumer_group = g.consumer_group
  left join pauses p on p.queue_id = g.queue_id and p.consumer_group = g.consumer_group;
end
$$;

create or replace function queen.count_dead_letters() returns trigger
language plpgsql as $$
begin
  -- every ack runs an insert here, nearly always of no row
  if not exists (select 1 from changed) then
    return null;
  end if;
  -- a partition deleted in this statement took its counts with it (cascade)
  with delta as (
    select c.partition_id, c.consumer_group, sum(c.n) as n
    from (select partition_id, consumer_group, case when tg_op = 'INSERT' then 1 else -1 end as n from changed) c
    where exists (select 1 from queen.partitions p where p.id = c.partition_id)
    group by c.partition_id, c.consumer_group
    order by c.partition_id, c.consumer_group
  )
  insert into queen.dead_letter_counts as t (partition_id, consumer_group, n)
  select partition_id, consumer_group, n from delta
  on conflict (partition_id, consumer_group) do update set n = t.n + excluded.n;
  delete from queen.dead_letter_counts t where t.n <= 0
    and (t.partition_id, t.consumer_group) in (select partition_id, consumer_group from changed);
  return null;
end
$$;

-- One sample of every queue and group at p_at, unless one was taken less than p_every ago (by
-- this instance or another: the instances call it at every heartbeat); prunes samples and holder
-- minutes older than p_keep, and folds the per-backend holder rows of past minutes into backend 0.
-- Returns whether it sampled. Planner settings as metric_figures (015): every read has its index.
create or replace function queen.sample_stats(p_every interval, p_keep interval, p_at timestamptz default now())
returns boolean
language plpgsql set enable_seqscan = off set jit = off as $$
begin
  if not pg_try_advisory_xact_lock(hashtext('queen.sample_stats')) then
    return false;
  end if;
  if exists (select 1 from queen.stats_samples s where s.at > p_at - p_every and s.at <= p_at) then
    return false;
  end if;

  with deliveries as (
    select d.queue_id, d.consumer_group, sum(d.delivered)::bigint as delivered, sum(d.acked)::bigint as acked
    from queen.delivery_stats d
    group by d.queue_id, d.consumer_group),
  groups as (
    select g.queue_id, g.consumer_group, g.messages, coalesce(d.delivered, 0) as delivered, coalesce(d.acked, 0) as acked,
           g.failures, g.lag
    from queen.group_figures() g
    left join deliveries d on d.queue_id = g.queue_id and d.consumer_group = g.consumer_group)
  insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag)
  select p_at, q.queue_id, '', q.messages, coalesce(sum(g.delivered), 0), coalesce(sum(g.acked), 0),
         coalesce(sum(g.failures), 0), coalesce(max(g.lag), q.stored)
  from queen.queue_figures() q
  left join groups g on g.queue_id = q.queue_id
  group by q.queue_id, q.messages, q.stored
  union all
  select p_at, g.queue_id, g.consumer_group, g.messages, g.delivered, g.acked, g.failures, g.lag
  from groups g
  on conflict do nothing;

  delete from queen.stats_samples s where s.at < p_at - p_keep;
  delete from queen.holder_stats h where h.minute < p_at - p_keep;

  -- a row a transaction still writes (one begun in that minute) is left for the next fold: never
  -- waiting on the hot path, the fold can never deadlock with it
  with gone as (
    delete from queen.holder_stats h
    where (h.minute, h.holder, h.backend) in (
      select x.minute, x.holder, x.backend from queen.holder_stats x
      where x.backend <> 0 and x.minute < date_trunc('minute', p_at)
      for update skip locked)
    returning h.minute, h.holder, h.acked, h.failed, h.expired, h.released, h.last_seen_at)
  insert into queen.holder_stats as t (minute, holder, backend, acked, failed, expired, released, last_seen_at)
  select g.minute, g.holder, 0, sum(g.acked), sum(g.failed), sum(g.expired), sum(g.released), max(g.last_seen_at)
  from gone g
  group by g.minute, g.holder
  order by g.minute, g.holder
  on conflict (minute, holder, backend) do update
    set acked = t.acked + excluded.acked, failed = t.failed + excluded.failed,
        expired = t.expired + excluded.expired, released = t.released + excluded.released,
        last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at);
  return true;
end
$$;
