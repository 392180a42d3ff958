import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import type { EmptyReason, IdleBecause } from '@/lib/broker/empty-reasons';

/** How many live leases a dry run's answer names before it says "and N more". */
const NAMED_LEASES = 5;

/**
 * Why a dry run found nothing, in more words than its `empty` (`reason`: a name of IDLE_BECAUSE in
 * lib/broker/empty-reasons.ts behind an `idle`, the queue or the partition does not exist, a pop
 * would create the queue, empty; or `leased`, the leases that hold the group's pending messages,
 * named with their holders and expiries). Null when none of these applies. Reads the group's leases on that queue
 * through the cursors' partial lease index, at most a few rows. On the primary, like the dry run it
 * explains (a replica could name leases already released).
 */
export async function dryRunWhy(queue: string | undefined, partition: string | undefined, group: string) {
  if (!queue) return null;
  const { rows } = await db().execute<{
    queue: boolean;
    partition: boolean | null;
    held: number;
    leases: { partition: string; holder: string | null; expiresAt: string; leaseId: string }[] | null;
  }>(sql`
    with q as (select q.id from queen.queues q where q.name = ${queue}),
    held as (
      select p.name as partition, c.lease_holder as holder, queen.iso(c.lease_expires_at) as "expiresAt", c.lease_id as "leaseId"
      from queen.cursors c join queen.partitions p on p.id = c.partition_id
      where c.queue_id = (select id from q) and c.consumer_group = ${group} and c.lease_id is not null and c.lease_expires_at > now()
        and p.head_offset > c.committed_offset and (${partition ?? null}::text is null or p.name = ${partition ?? null})
    )
    select exists (select 1 from q) as queue,
           case when ${partition ?? null}::text is null then null
                else exists (select 1 from queen.partitions p where p.queue_id = (select id from q) and p.name = ${partition ?? null}) end as partition,
           (select count(*)::int from held) as held,
           (select json_agg(h) from (select * from held order by "expiresAt" limit ${NAMED_LEASES}) h) as leases`);
  const r = rows[0];
  if (!r.queue)
    return {
      reason: 'no-queue' satisfies IdleBecause,
      text: `Queue ${JSON.stringify(queue)} does not exist: a pop would create it (empty), and it would stay until deleted. Is the name spelt right?`,
    };
  if (r.partition === false)
    return {
      reason: 'no-partition' satisfies IdleBecause,
      text: `Queue ${queue} has no partition ${JSON.stringify(partition)}: nothing to claim there.`,
    };
  if (r.held > 0) {
    const named = (r.leases ?? []).map(
      (l) => `${l.partition} is leased by ${l.holder ?? 'an unknown holder'} until ${l.expiresAt} (lease ${l.leaseId})`,
    );
    return {
      reason: 'leased' satisfies EmptyReason,
      text: `Held by other leases of group ${group}: ${named.join('; ')}${r.held > named.length ? `; and ${r.held - named.length} more` : ''}.`,
      /** how many leases hold the group's pending messages; `leases` names the first few */
      group,
      held: r.held,
      leases: r.leases ?? [],
    };
  }
  return null;
}
