import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest } from '@/lib/broker/errors';
import { name, parseWith, queryInteger } from '@/lib/broker/validate';
import { isUuid } from '@/lib/uuid';
import { leasesHref, messageHref, queueHref } from './links';

const MAX_SEARCH_MATCHES = 50;

export const searchQuery = z.object({
  q: name.optional(),
  kind: z.enum(['queue']).optional(),
  limit: queryInteger(1, MAX_SEARCH_MATCHES).optional(),
});

export interface SearchMatch {
  kind: 'lease' | 'message' | 'transaction' | 'queue';
  label: string;
  href: string;
}

/** `like` pattern of the names that start with `prefix`. */
const startsWith = (prefix: string) => `${prefix.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * What a pasted id or name is: a live lease (its partitions and spans on the Leases page), a message id, a
 * transaction id (one per partition it was pushed to), or queues whose name starts with it. Every
 * lookup is an index walk bounded by `limit`; `kind=queue` lists queue names only (empty `q`: the first).
 */
export async function findById(search: URLSearchParams) {
  const f = parseWith(searchQuery, Object.fromEntries(search), 'query');
  const q = (f.q ?? '').trim();
  const limit = f.limit ?? 20;
  if (!q && f.kind !== 'queue') throw badRequest('q: required (a lease id, message id, transaction id or queue name)');
  const matches: SearchMatch[] = [];
  if (f.kind !== 'queue') {
    if (isUuid(q)) {
      const leases = await db().execute<{ group: string; queue: string; spans: string }>(sql`
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
      const messages = await db().execute<{
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
    const transactions = await db().execute<{
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
  const queues = await db().execute<{ name: string }>(sql`
    select qu.name from queen.queues qu where qu.name like ${startsWith(q)}
    order by qu.name using ~<~ limit ${limit + 1}`);
  for (const { name: queue } of queues.rows)
    matches.push({ kind: 'queue', label: `queue ${queue}`, href: queueHref(queue) });
  return { q, matches: matches.slice(0, limit), truncated: matches.length > limit };
}
