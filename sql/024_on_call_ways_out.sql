-- Issue 20: the on-call dashboard's ways out.

-- The audit log reads newest first by time, then id, and pages on from an entry.
create index audit_log_at_id on queen.audit_log (at desc, id desc);
drop index queen.audit_log_at;

-- Every delivery of a span to a group (one per claim): who got it under which lease, and how it
-- ended (acked, failed, expired, released, dead-lettered, skipped, moved by a seek or a delete).
-- Filled by a trigger on the cursors' lease columns (sql/functions/ways_out.sql), not by the pop or
-- the ack themselves; kept DELIVERY_RETENTION_HOURS.
create table queen.deliveries (
  id bigint generated always as identity primary key,
  -- no foreign key: its check would take a key-share lock on the partition inside every claim
  -- (rows of a deleted partition go with the retention)
  partition_id uuid not null,
  consumer_group text not null,
  lease_id uuid,
  from_offset bigint not null,
  to_offset bigint not null,
  holder text,
  claimed_at timestamptz not null,
  -- its expiry (extensions included: the last one it got, then the one it had when it ended)
  expires_at timestamptz,
  extensions integer,
  extended_at timestamptz,
  ended_at timestamptz,
  ended text
);
create index deliveries_span on queen.deliveries (partition_id, consumer_group, from_offset desc, to_offset);
create index deliveries_open on queen.deliveries (lease_id) where ended_at is null;
create index deliveries_claimed on queen.deliveries (claimed_at);

-- stub: the body is in sql/functions/ways_out.sql
create function queen.record_delivery() returns trigger language plpgsql as $$ begin return null; end $$;
create trigger cursors_deliveries after update on queen.cursors
for each row when (old.lease_id is distinct from new.lease_id or old.deliveries <> new.deliveries
                   or old.lease_extensions <> new.lease_extensions)
execute function queen.record_delivery();

-- The holders seen claiming for each (queue, group) lately: the groups page's members. One row
-- per backend, as queen.holder_stats (019), so no two transactions ever write one row.
create table queen.group_members (
  -- no foreign key: its check would lock the queue row inside every claim, against the functions
  -- that lock the queue and then its cursors (rows of a deleted queue go with the retention)
  queue_id uuid not null,
  consumer_group text not null,
  holder text not null,
  backend integer not null,
  seen_at timestamptz not null,
  primary key (queue_id, consumer_group, holder, backend)
);
create index group_members_seen on queen.group_members (seen_at);

-- Leases of a holder an operator ended (released, or a message on it set aside): Consumers keeps
-- such a holder for the hour it counts.
alter table queen.holder_stats add column released bigint not null default 0;

-- Live's per-partition counts since the page opened: deliveries of a partition by claim time.
create index deliveries_claimed_in on queen.deliveries (partition_id, claimed_at);

-- deadLetterAfterExpiries: a message whose lease expired this many times is dead-lettered at the
-- next claim (0, the default, never: the contract says a lease expiry never uses retries).
alter table queen.queues add column dead_letter_after_expiries integer not null default 0;
