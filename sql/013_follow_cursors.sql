-- The backlog rows of a partition follow its cursors after they moved (a retention run, a
-- deleted message): claimable or blocked again, the oldest pending time moved, a drained pair gone.
create function queen.follow_cursors(p_partition uuid) returns void
language plpgsql as $$
begin
  update queen.backlog b set blocked_until = queen.cursor_block(c),
                             pending_since = queen.pending_since(c.partition_id, c.committed_offset)
  from queen.cursors c
  where b.partition_id = p_partition and c.partition_id = p_partition and c.consumer_group = b.consumer_group;
  perform queen.drop_drained(p_partition, c.consumer_group, c.committed_offset)
  from queen.cursors c join queen.partitions p on p.id = c.partition_id
  where c.partition_id = p_partition and p.head_offset <= c.committed_offset;
end
$$;
