-- With auth on, a lease records the token's subject next to the holder name the consumer gives
-- (issue 21): X-Queen-Consumer is whatever the consumer sends, the subject is who signed in.
-- A table of its own, one row per (partition, group), rather than a column of queen.cursors: an
-- ALTER of the hottest table takes an exclusive lock that queues every pop and push behind it
-- while instances of the previous release run during a rolling upgrade (and can deadlock them).
-- A row counts only while its lease_id is the cursor's lease_id; queen.pop overwrites it.
-- queen.pop takes the subject as a 15th argument (sql/functions/pop.sql); its 14-argument form of
-- 0.1.0 stays, recording no subject.
create table queen.lease_subjects (
  partition_id uuid not null,
  consumer_group text not null,
  lease_id uuid not null,
  subject text not null,
  primary key (partition_id, consumer_group)
);
