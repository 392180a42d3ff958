-- The figures every page, route and metric reads, from the counters of 007: a few rows per queue
-- and per (queue, group), whatever the number of partitions. Lag counts every partition of the
-- queue, from the group's seed where the group never claimed (a seed counts as committed).

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
