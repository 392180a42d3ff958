-- A deadlock between queen.push() and a draining queen.ack() or pop (bench --soak: 40P01 after 15.8 min).
--
-- queen.drop_drained() takes the partition row FOR SHARE SKIP LOCKED so that a pop or an ack never
-- waits for a push. PostgreSQL breaks that promise in one case: when the row version the statement
-- found was updated by a push that commits during the lock attempt, heap_lock_tuple() follows the
-- update chain and waits, whatever the wait policy, for the holder of the newer version, i.e. the
-- next push to the partition ("while locking updated version (..) of tuple in relation
-- partitions"). The ack (or pop) has already updated its backlog row by then, and that push's
-- `insert into queen.backlog ... on conflict do nothing` waits for it ("while inserting index
-- tuple (..) in relation backlog"): a cycle.
--
-- The share lock is now tried under a lock timeout far below deadlock_timeout, in a subtransaction:
-- a lock not had at once (skipped) or within the timeout (the case above) counts as skipped, which
-- is what SKIP LOCKED meant here: the backlog row stays, and the next pop or ack to look at the
-- partition tries again. A row is still only removed under the share lock, held to commit.

create function queen.try_share_partition(p_partition uuid) returns boolean
language plpgsql set lock_timeout = '20ms' as $$
begin
  perform 1 from queen.partitions p where p.id = p_partition for share skip locked;
  return found;
exception when lock_not_available or deadlock_detected then
  return false;
end
$$;

create or replace function queen.drop_drained(p_partition uuid, p_group text, p_committed bigint) returns void
language plpgsql as $$
declare
  v_locked boolean;
begin
  -- a statement of its own: the head below is read with a snapshot taken after the lock
  v_locked := queen.try_share_partition(p_partition);
  if v_locked and (select p.head_offset from queen.partitions p where p.id = p_partition) <= p_committed then
    delete from queen.backlog b where b.partition_id = p_partition and b.consumer_group = p_group;
  end if;
end
$$;
