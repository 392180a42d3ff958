-- Issue 32: the books a change of a cursor keeps (the deliveries history, delivered and acked per
-- group, the holder's events, the group's members) are kept by one trigger instead of three, so
-- that a claim or an ack pays one trigger call and what it acked is counted once.
drop trigger cursors_count_deliveries on queen.cursors;
drop trigger cursors_count_holder_events on queen.cursors;
drop trigger cursors_deliveries on queen.cursors;
drop function queen.count_deliveries();
drop function queen.count_holder_events();
drop function queen.record_delivery();
drop function if exists queen.acked_by(queen.cursors, queen.cursors);

-- stub: the body is in sql/functions/figures.sql
create function queen.cursor_bookkeeping() returns trigger language plpgsql as $$ begin return null; end $$;
create trigger cursors_bookkeeping after update on queen.cursors
for each row when (old.deliveries <> new.deliveries or old.last_ack_at is distinct from new.last_ack_at
                   or old.lease_expiries <> new.lease_expiries or old.lease_id is distinct from new.lease_id
                   or old.lease_extensions <> new.lease_extensions)
execute function queen.cursor_bookkeeping();
