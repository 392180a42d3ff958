-- The figures /metrics/prometheus reads, in one query whatever the number of partitions.
--
-- Messages delivered and acked per (queue, group) are counted in the database, so that every
-- instance reports the same totals and a restart resets nothing. A trigger on queen.cursors adds
-- each claim's and each ack's change to a row of this backend's own (queue, group, backend): no two
-- transactions ever write one row, so counting takes no lock another one waits for, and the pop
-- and ack functions stay as they are. Rows of ended backends are folded into backend 0 by
-- queen.fold_delivery_stats(), which the instances' heartbeat calls.

create table queen.delivery_stats (
  queue_id uuid not null,
  consumer_group text not null,
  -- pg_backend_pid() of the writer; 0 holds the folded rows of ended backends
  backend integer not null,
  -- messages handed out by pops, redeliveries included (the sum of the cursors' deliveries)
  delivered bigint not null default 0,
  -- messages completed: by an ack with status completed, or at delivery with autoAck
  acked bigint not null default 0,
  primary key (queue_id, consumer_group, backend)
);

-- A pop changes `deliveries`; an ack sets `last_ack_at`. What became done (committed plus the acked
-- offsets above it) minus what was dead-lettered is what was acked. Seeks, re-seeds and the
-- lifecycle job's evictions move cursors too, but touch neither column, so they count nothing.
create function queen.count_deliveries() returns trigger
language plpgsql as $$
begin
  insert into queen.delivery_stats as t (queue_id, consumer_group, backend, delivered, acked)
  values (new.queue_id, new.consumer_group, pg_backend_pid(), new.deliveries - old.deliveries,
          greatest((new.committed_offset + cardinality(new.acked_offsets)) - (old.committed_offset + cardinality(old.acked_offsets))
                   - (new.dead_letters - old.dead_letters), 0))
  on conflict (queue_id, consumer_group, backend) do update
    set delivered = t.delivered + excluded.delivered, acked = t.acked + excluded.acked;
  return null;
end
$$;

create trigger cursors_count_deliveries
after update on queen.cursors
for each row
when (new.deliveries <> old.deliveries or new.last_ack_at is distinct from old.last_ack_at)
execute function queen.count_deliveries();

-- Folds the rows of backends that have ended into backend 0, and drops those of deleted groups
-- and queues. One instance at a time; another one calling meanwhile skips.
create function queen.fold_delivery_stats() returns void
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
create function queen.metric_figures()
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
