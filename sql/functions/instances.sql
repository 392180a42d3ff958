create or replace function queen.heartbeat(p_instance text, p_live_viewers boolean) returns void
language sql as $$
  insert into queen.instances (id, live_viewers) values (p_instance, p_live_viewers)
  on conflict (id) do update set seen_at = now(), live_viewers = excluded.live_viewers;
  delete from queen.instances where seen_at < now() - interval '1 hour';
$$;
