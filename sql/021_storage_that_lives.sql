-- A broker that has lived (issue 17): retention that never strands a group, bounds storage under
-- slow consumers, and costs only what it deletes. The function bodies are in sql/functions/
-- (groups.sql: low_water, position_at, passed; lifecycle.sql: retain_partition, run_lifecycle,
-- keep_what_outlives_messages).

-- The lifecycle job reads what is due through one index, whatever the number of partitions;
-- retain_misses counts the runs in a row that removed nothing, for the back-off.
alter table queen.partitions add column retain_misses smallint not null default 0;
create index partitions_retain_due on queen.partitions (retain_check_at) where retain_check_at is not null;

-- A dead letter keeps what is needed to read, requeue or discard it when its message is removed
-- (the message's ttl ends long before DEAD_LETTER_RETENTION_DAYS).
alter table queen.dead_letters
  add column message_id uuid,
  add column transaction_id text,
  add column trace_id text,
  add column payload jsonb,
  add column encrypted boolean,
  add column producer_sub text,
  add column created_at timestamptz;
create index dead_letters_offset on queen.dead_letters (partition_id, "offset");

-- Transaction ids of removed messages, remembered for the dedup window counted from their push.
create table queen.removed_transactions (
  transaction_id text not null,
  partition_id uuid not null,
  message_id uuid not null,
  forget_at timestamptz not null,
  primary key (transaction_id, partition_id)
);
create index removed_transactions_forget on queen.removed_transactions (forget_at);

insert into queen.system_state (key, value) values ('dedup', '{"dedupWindowSeconds": 7200}') on conflict do nothing;

-- stub: the body is in sql/functions/lifecycle.sql
create function queen.keep_what_outlives_messages() returns trigger language plpgsql as $$ begin return null; end $$;
create trigger messages_leave_what_outlives_them after delete on queen.messages
  referencing old table as gone for each statement execute function queen.keep_what_outlives_messages();

-- Cursors of groups that joined after the head was trimmed stood below it for ever: they pass
-- over what is gone at their next claim; their seeds and counters start at the low-water mark.
update queen.partitions p set retain_check_at = now(), retain_misses = 0 where p.retain_check_at is not null;
