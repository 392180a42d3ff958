-- The Streams API (issue 23, spec/streams.md): queries and their per-shard state, named as the
-- reference broker names them (the SDKs' test suites clean up with
-- DELETE FROM queen_streams.queries WHERE name LIKE 'test-%'). Message ids become monotonic
-- within a partition through sql/functions/util.sql and push.sql (no table change).
create schema queen_streams;

create table queen_streams.queries (
  id uuid primary key,
  name text not null unique,
  source_queue text not null,
  sink_queue text,
  config_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- partition_id has no foreign key: state outlives its source partition (queue deletion,
-- retention and seek never remove it). Keys sort in byte order.
create table queen_streams.state (
  query_id uuid not null references queen_streams.queries (id) on delete cascade,
  partition_id uuid not null,
  key text collate "C" not null,
  value jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (query_id, partition_id, key)
);

-- One row per (query, source partition) that ever committed a cycle: its row lock serializes
-- the shard's cycles, and it keeps the shard's figures (maintained, not counted) for the
-- dashboard and the metrics. state_bytes counts each row's key and value text.
create table queen_streams.shards (
  query_id uuid not null references queen_streams.queries (id) on delete cascade,
  partition_id uuid not null,
  -- the group of the shard's last ack-bearing cycle (SDKs: streams.<queryId>)
  consumer_group text,
  cycles bigint not null default 0,
  refused bigint not null default 0,
  state_keys bigint not null default 0,
  state_bytes bigint not null default 0,
  last_cycle_at timestamptz,
  last_refused_at timestamptz,
  last_refusal text,
  primary key (query_id, partition_id)
);
