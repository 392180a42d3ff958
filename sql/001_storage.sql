-- The storage model (DESIGN.md §3). Every hot operation touches one partition, so every table
-- below `queues` is keyed by partition id first.

create table queen.queues (
  id uuid primary key,
  name text not null unique,
  namespace text not null default '',
  task text not null default '',
  lease_time integer not null default 60,
  retry_limit integer not null default 3,
  retry_delay integer not null default 1000,
  delayed_processing integer not null default 0,
  window_buffer integer not null default 0,
  min_pop_wait_time integer not null default 0,
  max_size integer not null default 0,
  ttl integer not null default 3600,
  priority integer not null default 0,
  dead_letter_queue boolean not null default false,
  dlq_after_max_retries boolean not null default false,
  retention_enabled boolean not null default false,
  retention_seconds integer not null default 0,
  completed_retention_seconds integer not null default 0,
  encryption_enabled boolean not null default false,
  max_wait_time_seconds integer not null default 0,
  configured boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index queues_scope on queen.queues (namespace, task);

create table queen.partitions (
  id uuid primary key,
  queue_id uuid not null references queen.queues (id) on delete cascade,
  name text not null,
  head_offset bigint not null default 0,
  last_push_at timestamptz,
  created_at timestamptz not null default now(),
  unique (queue_id, name)
);

-- segments and messages carry no foreign key: a per-row check costs as much as the insert on the
-- push path, and only queen.push() writes them; queen.delete_queue() removes them explicitly.
create table queen.segments (
  partition_id uuid not null,
  first_offset bigint not null,
  last_offset bigint not null,
  created_at timestamptz not null,
  primary key (partition_id, first_offset)
);

create table queen.messages (
  partition_id uuid not null,
  "offset" bigint not null,
  id uuid not null,
  transaction_id text not null,
  trace_id text,
  payload jsonb not null,
  encrypted boolean not null default false,
  producer_sub text,
  segment_offset bigint not null,
  primary key (partition_id, "offset"),
  -- transaction id first: for a (partition, transactionId) lookup this index is an exact match
  -- while the primary key is only a prefix match, so the planner never confuses the two
  unique (transaction_id, partition_id)
);

create table queen.cursors (
  partition_id uuid not null references queen.partitions (id) on delete cascade,
  consumer_group text not null,
  committed_offset bigint not null default 0,
  -- offsets above committed that are done (acked, or dead-lettered) but not yet contiguous
  acked_offsets bigint[] not null default '{}',
  lease_id uuid,
  lease_end_offset bigint,
  lease_acquired_at timestamptz,
  lease_expires_at timestamptz,
  lease_holder text,
  lease_extensions integer not null default 0,
  retry_not_before timestamptz,
  max_delivered_offset bigint not null default 0,
  deliveries bigint not null default 0,
  redeliveries bigint not null default 0,
  lease_expiries bigint not null default 0,
  failures bigint not null default 0,
  dead_letters bigint not null default 0,
  last_claim_at timestamptz,
  last_ack_at timestamptz,
  paused boolean not null default false,
  paused_reason text,
  paused_by text,
  paused_at timestamptz,
  paused_until timestamptz,
  created_at timestamptz not null default now(),
  primary key (partition_id, consumer_group)
);
create index cursors_lease on queen.cursors (lease_id) where lease_id is not null;
create index cursors_lease_expiry on queen.cursors (lease_expires_at) where lease_id is not null;
create index cursors_group on queen.cursors (consumer_group);

create table queen.message_attempts (
  partition_id uuid not null references queen.partitions (id) on delete cascade,
  consumer_group text not null,
  "offset" bigint not null,
  deliveries integer not null default 1,
  failures integer not null default 0,
  last_error text,
  last_delivered_at timestamptz,
  last_failed_at timestamptz,
  primary key (partition_id, consumer_group, "offset")
);

create table queen.dead_letters (
  partition_id uuid not null references queen.partitions (id) on delete cascade,
  consumer_group text not null,
  "offset" bigint not null,
  error_message text,
  retry_count integer not null,
  failed_at timestamptz not null default now(),
  primary key (partition_id, consumer_group, "offset")
);
create index dead_letters_failed_at on queen.dead_letters (failed_at desc);

create table queen.subscriptions (
  queue_id uuid not null references queen.queues (id) on delete cascade,
  consumer_group text not null,
  mode text not null,
  -- a new cursor starts just before the first segment created at or after this time; null = oldest
  start_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (queue_id, consumer_group)
);

create table queen.system_state (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);
insert into queen.system_state (key, value) values ('pop_maintenance', '{"enabled": false}');

create table queen.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  actor text not null,
  action text not null,
  target_type text not null,
  target text not null,
  reason text,
  result text not null,
  details jsonb not null default '{}'
);
create index audit_log_at on queen.audit_log (at desc);
