import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { badRequest } from '@/lib/broker/errors';
import { name, parseWith, queryInteger } from '@/lib/broker/validate';
import { isUuid } from '@/lib/uuid';
import { groupsHref, leasesHref, messageHref, queueHref } from './links';

const MAX_SEARCH_MATCHES = 50;

export const searchQuery = z.object({
  q: name.optional(),
  kind: z.enum(['queue']).optional(),
  limit: queryInteger(1, MAX_SEARCH_MATCHES).optional(),
});

export interface SearchMatch {
  kind: 'lease' | 'message' | 'transaction' | 'holder' | 'group' | 'partition' | 'queue';
  label: string;
  href: string;
}

/** `like` pattern of the names that start with `prefix`. */
const startsWith = (prefix: string) => `${prefix.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * What a pasted id or name is: a live lease (its partitions and spans on the Leases page), a message id, a
 * transaction id (one per partition it was pushed to), a lease holder (its leases on the Leases
 * page), a consumer group (on /groups), a partition (on its queue page, one per queue that has
 * one of that name), all exactly; or queues whose name starts with it. Every lookup is an index
 * walk bounded by `limit`; `kind=queue` lists queue names only (empty `q`: the first).
 */
export async function findById(search: URLSearchParams) {
  const f = parseWith(searchQuery, Object.fromEntries(search), 'query');
  const q = (f.q ?? '').trim();
  const limit = f.limit ?? 20;
  if (!q && f.kind !== 'queue')
    throw badRequest('q: required (a lease id, message id, transaction id, holder, group, partition or queue name)');
  const matches: SearchMatch[] = [];
  if (f.kind !== 'queue') {
    if (isUuid(q)) {
      const leases = await readDb().execute<{ group: string; queue: string; spans: string }>(sql`
        select c.consumer_group as group, qu.name as queue,
               string_agg(p.name || ' ' || (c.committed_offset + 1) || '–' || c.lease_end_offset, ', ' order by p.name) as spans
        from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues qu on qu.id = p.queue_id
        where c.lease_id = ${q}::uuid
        group by c.consumer_group, qu.name`);
      for (const l of leases.rows) {
        matches.push({
          kind: 'lease',
          label: `lease ${q} of ${l.group} on ${l.queue}: ${l.spans}`,
          href: leasesHref({ lease: q }),
        });
      }
      const messages = await readDb().execute<{
        partition_id: string;
        transaction_id: string;
        queue: string;
        partition: string;
        offset: number;
      }>(sql`
        select m.partition_id, m.transaction_id, qu.name as queue, p.name as partition, m."offset"::float8 as "offset"
        from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues qu on qu.id = p.queue_id
        where m.id = ${q}::uuid limit ${limit + 1}`);
      for (const m of messages.rows) {
        matches.push({
          kind: 'message',
          label: `message ${q}: ${m.queue}/${m.partition} offset ${m.offset}`,
          href: messageHref(m.partition_id, m.transaction_id),
        });
      }
    }
    const transactions = await readDb().execute<{
      partition_id: string;
      queue: string;
      partition: string;
      offset: number;
    }>(sql`
      select m.partition_id, qu.name as queue, p.name as partition, m."offset"::float8 as "offset"
      from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues qu on qu.id = p.queue_id
      where m.transaction_id = ${q} limit ${limit + 1}`);
    for (const t of transactions.rows) {
      matches.push({
        kind: 'transaction',
        label: `transaction ${q}: ${t.queue}/${t.partition} offset ${t.offset}`,
        href: messageHref(t.partition_id, q),
      });
    }
  }
  if (f.kind !== 'queue') {
    // a holder of a lease not yet ended (cursors_lease_holder, sql/031)
    const holders = await readDb().execute<{ leases: number; partitions: number }>(sql`
      select count(distinct c.lease_id)::int as leases, count(*)::int as partitions
      from queen.cursors c where c.lease_holder = ${q} and c.lease_id is not null`);
    const h = holders.rows[0];
    if (h && h.partitions > 0)
      matches.push({
        kind: 'holder',
        label: `holder ${q}: ${h.leases} lease${h.leases === 1 ? '' : 's'} on ${h.partitions} partition${h.partitions === 1 ? '' : 's'}`,
        href: leasesHref({ holder: q }),
      });
    // a consumer group (queue_groups_group, 007)
    const groups = await readDb().execute<{ queues: number }>(sql`
      select count(*)::int as queues from queen.queue_groups g where g.consumer_group = ${q}`);
    const g = groups.rows[0];
    if (g && g.queues > 0)
      matches.push({
        kind: 'group',
        label: `group ${q}: reads ${g.queues} queue${g.queues === 1 ? '' : 's'}`,
        href: groupsHref({ group: q }),
      });
    // a partition of that name, per queue (partitions_name, sql/031)
    const partitions = await readDb().execute<{ queue: string }>(sql`
      select qu.name as queue from queen.partitions p join queen.queues qu on qu.id = p.queue_id
      where p.name = ${q} order by qu.name limit ${limit + 1}`);
    for (const p of partitions.rows)
      matches.push({
        kind: 'partition',
        label: `partition ${q} of ${p.queue}`,
        href: queueHref(p.queue, { partition: q }),
      });
  }
  const queues = await readDb().execute<{ name: string }>(sql`
    select qu.name from queen.queues qu where qu.name like ${startsWith(q)}
    order by qu.name using ~<~ limit ${limit + 1}`);
  for (const { name: queue } of queues.rows)
    matches.push({ kind: 'queue', label: `queue ${queue}`, href: queueHref(queue) });
  return { q, matches: matches.slice(0, limit), truncated: matches.length > limit };
}
