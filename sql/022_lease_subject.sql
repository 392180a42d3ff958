-- With auth on, a lease records the token's subject next to the holder name the consumer gives
-- (issue 21): X-Queen-Consumer is whatever the consumer sends, the subject is who signed in.
-- Read only while lease_id is set (queen.pop writes both; what ends a lease may leave it behind).
-- queen.pop takes it as a 15th argument (sql/functions/pop.sql); its 14-argument form of 0.1.0
-- stays, recording no subject, for instances of that release during a rolling upgrade.
alter table queen.cursors add column lease_subject text;
