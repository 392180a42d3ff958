-- Issue 34, item 6: what the System page and Consumers' client details read.

-- Each instance's process figures (memory, uptime, parked polls, pool), written with its heartbeat
-- (every 5 s, its own row): the System page shows every live instance, not only the one serving it.
alter table queen.instances add column facts jsonb;

-- The lifecycle job's last runs, newest first (sql/functions/lifecycle.sql keeps 20), beside
-- 'lifecycle' (the last one).
insert into queen.system_state (key, value) values ('lifecycle_runs', '[]') on conflict (key) do nothing;

-- What the server knows of a lease holder's pop requests: the address and user agent it came from
-- and how many pops (and of those, empty ones) per minute and instance. Counted in memory by each
-- instance and written with its heartbeat (one statement every 5 s for all the holders it served),
-- never by the pop itself; kept an hour.
create table queen.holder_clients (
  minute timestamptz not null,
  holder text not null,
  instance text not null,
  address text,
  user_agent text,
  pops bigint not null default 0,
  empty_pops bigint not null default 0,
  last_pop_at timestamptz not null,
  primary key (minute, holder, instance)
);
create index holder_clients_holder on queen.holder_clients (holder, minute);
