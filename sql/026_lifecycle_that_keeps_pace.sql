-- Issue 30: a lifecycle job that keeps pace with the load. A run goes on, batch after batch, until
-- nothing due is left or its time is spent, and forgets the deliveries history too (it was a
-- separate call of at most 10,000 rows). queen.run_lifecycle takes two more arguments, with
-- defaults, so a call of the earlier five or six still works; the body is in
-- sql/functions/lifecycle.sql.
drop procedure queen.run_lifecycle(integer, integer, integer, text, integer, jsonb);
-- stub: the body is in sql/functions/lifecycle.sql
create procedure queen.run_lifecycle(p_budget integer, p_audit_days integer, p_dead_letter_days integer, p_instance text,
                                     p_interval_ms integer, inout p_summary jsonb default null,
                                     p_delivery_hours integer default 24, p_seconds numeric default 5)
language plpgsql as $$ begin end $$;
