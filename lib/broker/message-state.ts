import { sql, type SQL } from 'drizzle-orm';

/**
 * Where the message at `offset` stands for the group of the cursor row `c` (queen.cursors):
 * done / leased / pending / dead_letter, as GET /api/v1/messages/:partitionId/:transactionId
 * answers. `deadLettered` says whether the group dead-lettered it.
 */
export const groupState = (offset: SQL, deadLettered: SQL) => sql`case
  when ${deadLettered} then 'dead_letter'
  when ${offset} <= c.committed_offset or ${offset} = any (c.acked_offsets) then 'done'
  when c.lease_expires_at > now() and ${offset} <= c.lease_end_offset then 'leased'
  else 'pending' end`;
