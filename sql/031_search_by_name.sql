-- Issue 34: the nav search finds lease holders and partitions by name (exactly), as it finds
-- groups (queue_groups_group, 007): one index probe each at any size, as for ids.
-- A holder of a live or expired-not-reclaimed lease (what the Leases page lists for it).
create index if not exists cursors_lease_holder on queen.cursors (lease_holder) where lease_id is not null;
-- A partition by name, in every queue (the (queue_id, name) key needs the queue).
create index if not exists partitions_name on queen.partitions (name);
