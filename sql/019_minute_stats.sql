-- Rates and trends (the queue page's chart, the Overview's sparklines) and per-holder history
-- (the Consumers page).
--
-- stats_samples holds the CUMULATIVE counters the broker already keeps (queue_stats,
-- group_stats, delivery_stats), copied every few seconds by one instance: a rate is the
-- difference between two consecutive samples over the seconds between them. Sampling reads a
-- few rows per queue and per (queue, group), whatever the number of partitions.
--
-- holder_stats attributes acks, failures and expiries to the lease holder, per
-- minute: a trigger on queen.cursors in the manner of 015's count_deliveries, writing to a row of
-- its own backend, so no two transactions ever write one row. The pop and ack functions stay as
-- they are.

create table queen.stats_samples (
  at timestamptz not null,
  queue_id uuid not null,
  -- '' is the queue itself (no group has that name: an empty consumerGroup is queue mode's):
  -- delivered, acked and failed summed over its groups, lag the largest of any group
  consumer_group text not null,
  -- every message ever pushed to the queue
  pushed bigint not null,
  delivered bigint not null,
  acked bigint not null,
  failed bigint not null,
  lag bigint not null,
  primary key (queue_id, consumer_group, at)
);
-- the prune's range (and whether anyone sampled lately)
create index stats_samples_at on queen.stats_samples (at);
-- every queue as a whole over a window (the Overview's sparklines) without reading the groups'
-- rows: no skip scan in PG15, so the primary key cannot serve "consumer_group = '' and at >= x"
create index stats_samples_queues on queen.stats_samples (at) where consumer_group = '';

create table queen.holder_stats (
  minute timestamptz not null,
  holder text not null,
  -- pg_backend_pid() of the writer; 0 holds the rows folded by queen.sample_stats()
  backend integer not null,
  acked bigint not null default 0,
  failed bigint not null default 0,
  -- leases of this holder that expired (counted when reclaimed or released, as group_stats counts them)
  expired bigint not null default 0,
  -- the holder's last ack in that minute, or the claim of a lease of its that expired
  last_seen_at timestamptz,
  primary key (minute, holder, backend)
);

-- An ack, a failure or an expiry counts for the holder of the lease it acts on or ends (OLD).
-- Claims are not counted: a trigger on every pop would lengthen the claim of a busy partition's
-- cursor (the page shows what a holder holds now from the cursors themselves). Acked as 015 counts
-- it: what became done, minus what was dead-lettered; what a claim completes (autoAck) takes no
-- lease, so it is nobody's, not even that of the holder whose expired lease the claim ends.
create function queen.count_holder_events() returns trigger
language plpgsql as $$
declare
  v_acked bigint := case when new.deliveries > old.deliveries then 0
                         else greatest((new.committed_offset + cardinality(new.acked_offsets)) - (old.committed_offset + cardinality(old.acked_offsets))
                                       - (new.dead_letters - old.dead_letters), 0) end;
  v_failed bigint := new.failures - old.failures;
  v_expired bigint := new.lease_expiries - old.lease_expiries;
begin
  if v_acked > 0 or v_failed > 0 or v_expired > 0 then
    insert into queen.holder_stats as t (minute, holder, backend, acked, failed, expired, last_seen_at)
    values (date_trunc('minute', now()), old.lease_holder, pg_backend_pid(), v_acked, v_failed, v_expired,
            case when v_acked > 0 or v_failed > 0 then now() else old.lease_acquired_at end)
    on conflict (minute, holder, backend) do update
      set acked = t.acked + excluded.acked, failed = t.failed + excluded.failed, expired = t.expired + excluded.expired,
          last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at);
  end if;
  return null;
end
$$;

create trigger cursors_count_holder_events
after update on queen.cursors
for each row
when (old.lease_holder is not null
      and (new.last_ack_at is distinct from old.last_ack_at or new.lease_expiries <> old.lease_expiries))
execute function queen.count_holder_events();

-- One sample of every queue and group at p_at, unless one was taken less than p_every ago (by
-- this instance or another: the instances call it at every heartbeat); prunes samples and holder
-- minutes older than p_keep, and folds the per-backend holder rows of past minutes into backend 0.
-- Returns whether it sampled. Planner settings as metric_figures (015): every read has its index.
create function queen.sample_stats(p_every interval, p_keep interval, p_at timestamptz default now())
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
    returning h.minute, h.holder, h.acked, h.failed, h.expired, h.last_seen_at)
  insert into queen.holder_stats as t (minute, holder, backend, acked, failed, expired, last_seen_at)
  select g.minute, g.holder, 0, sum(g.acked), sum(g.failed), sum(g.expired), max(g.last_seen_at)
  from gone g
  group by g.minute, g.holder
  order by g.minute, g.holder
  on conflict (minute, holder, backend) do update
    set acked = t.acked + excluded.acked, failed = t.failed + excluded.failed,
        expired = t.expired + excluded.expired, last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at);
  return true;
end
$$;
