-- Defects found by review (issue 12): subscriptions to a namespace/task that reach queues created
-- later, and notification payloads measured in bytes.

-- A discovery pop with `subscriptionMode=new` (or `subscriptionFrom`) subscribes its group to the
-- scope at that time: a queue of that scope created later gets the group's subscription record
-- with the scope's start time (and the group), so its first messages are not skipped.
create table queen.scope_subscriptions (
  namespace text not null,
  task text not null,
  consumer_group text not null,
  mode text not null,
  start_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (namespace, task, consumer_group)
);

-- Gives a queue the subscriptions (and groups) of every scope it falls in.
create function queen.adopt_scope_subscriptions(p_queue uuid) returns void
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
    where not exists (select 1 from queen.queues q where q.name = n)
    on conflict (name) do nothing
    returning id
  loop
    if exists (select 1 from queen.scope_subscriptions) then
      perform queen.adopt_scope_subscriptions(v_queue);
    end if;
  end loop;
end
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
