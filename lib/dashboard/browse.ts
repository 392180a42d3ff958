import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { payloadText } from '@/lib/broker/crypto';
import { groupState } from '@/lib/broker/message-state';
import { notFound } from '@/lib/broker/errors';
import { name, parseWith, pathName, queryInteger } from '@/lib/broker/validate';

/** The widest window the browse page reads: offsets [from, from + limit), through the primary key. */
const MAX_BROWSE_WINDOW = 100;
/** Groups shown per partition; a partition read by more groups lists the first ones by name, and the group asked for. */
const MAX_BROWSE_GROUPS = 50;
const PREVIEW_CHARS = 120;

export const browseQuery = z.object({
  from: queryInteger(1).optional(),
  limit: queryInteger(1, MAX_BROWSE_WINDOW).optional(),
  group: name.optional(),
});
type BrowseQuery = z.output<typeof browseQuery>;

export interface BrowseWindow {
  queue: string;
  partition: string;
  partitionId: string;
  head: number;
  /** the group whose cursor centres the window by default; null: the lowest committed cursor */
  group: string | null;
  from: number;
  to: number;
  limit: number;
  prevFrom: number | null;
  nextFrom: number | null;
  groups: { name: string; committed: number }[];
  messages: {
    offset: number;
    id: string;
    transactionId: string;
    createdAt: string;
    preview: string;
    states: { group: string; state: 'done' | 'leased' | 'pending' | 'dead_letter' }[];
  }[];
}

export function parseBrowseQuery(search: URLSearchParams | Record<string, string | undefined>): BrowseQuery {
  const raw = search instanceof URLSearchParams ? Object.fromEntries(search) : search;
  return parseWith(
    browseQuery,
    Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== '')),
    'query',
  );
}

/**
 * A window of at most 100 offsets of one partition, with every message's state in each group
 * reading the partition. Without `from` the window is centred on the cursor of `group`, or on the
 * lowest committed cursor of the partition.
 */
export async function browsePartition(queue: string, partition: string, q: BrowseQuery): Promise<BrowseWindow> {
  pathName(queue, 'queue');
  pathName(partition, 'partition');
  const limit = q.limit ?? 50;
  const head = await readDb().execute<{ id: string; head: number; groups: { name: string; committed: number }[] }>(sql`
    select p.id, p.head_offset::float8 as head,
           coalesce((select json_agg(json_build_object('name', g.consumer_group, 'committed', g.committed_offset) order by g.consumer_group)
                     from ((select c.consumer_group, c.committed_offset from queen.cursors c
                            where c.partition_id = p.id order by c.consumer_group limit ${MAX_BROWSE_GROUPS})
                           -- the group asked for, by its key, wherever it ranks by name
                           union
                           select c.consumer_group, c.committed_offset from queen.cursors c
                           where c.partition_id = p.id and c.consumer_group = ${q.group ?? null}) g), '[]') as groups
    from queen.queues q join queen.partitions p on p.queue_id = q.id and p.name = ${partition}
    where q.name = ${queue}`);
  if (head.rows.length === 0)
    throw notFound(`partition ${JSON.stringify(partition)} of queue ${JSON.stringify(queue)} not found`);
  const { id, head: headOffset, groups } = head.rows[0];
  const chosen = q.group ? groups.find((g) => g.name === q.group) : undefined;
  if (q.group && !chosen) throw notFound(`group ${JSON.stringify(q.group)} has no cursor on this partition`);
  const cursor = chosen ? chosen.committed : groups.length ? Math.min(...groups.map((g) => g.committed)) : 0;
  const from = q.from ?? Math.max(1, cursor + 1 - Math.floor(limit / 2));
  const to = from + limit - 1;
  const { rows } = await readDb().execute<{
    offset: number;
    id: string;
    transaction_id: string;
    created_at: string;
    data: string;
    encrypted: boolean;
    states: BrowseWindow['messages'][number]['states'];
  }>(sql`
    select m."offset"::float8 as "offset", m.id, m.transaction_id, queen.iso(s.created_at) as created_at,
           m.payload::text as data, m.encrypted,
           coalesce((select json_agg(json_build_object('group', c.consumer_group,
                       'state', ${groupState(sql`m."offset"`, sql`exists (select 1 from queen.dead_letters d where d.partition_id = c.partition_id and d.consumer_group = c.consumer_group and d."offset" = m."offset")`)})
                       order by c.consumer_group)
                     from queen.cursors c
                     where c.partition_id = m.partition_id and c.consumer_group = any (${sql.param(groups.map((g) => g.name))}::text[])), '[]') as states
    from queen.messages m
    join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
    where m.partition_id = ${id}::uuid and m."offset" between ${from} and ${to}
    order by m."offset"`);
  return {
    queue,
    partition,
    partitionId: id,
    head: headOffset,
    group: q.group ?? null,
    from,
    to,
    limit,
    prevFrom: from > 1 ? Math.max(1, from - limit) : null,
    nextFrom: to < headOffset ? to + 1 : null,
    groups,
    messages: rows.map((r) => ({
      offset: r.offset,
      id: r.id,
      transactionId: r.transaction_id,
      createdAt: r.created_at,
      preview: payloadText(r.data, r.encrypted).slice(0, PREVIEW_CHARS),
      states: r.states,
    })),
  };
}
