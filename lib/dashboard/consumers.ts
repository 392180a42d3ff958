import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readDb } from '@/db/pool';
import { parseWith, queryInteger } from '@/lib/broker/validate';
import { SILENT_AFTER_SECONDS } from './signals';

export interface Consumer {
  holder: string;
  /** what it holds now: distinct lease ids (a multi-partition pop holds one id over several partitions) */
  leases: number;
  /** leased (partition, group) pairs: the rows GET /api/v1/leases?holderIs= lists */
  partitions: number;
  /** messages in their spans */
  messages: number;
  /** of those pairs, the ones past their expiry that nobody reclaimed yet (…&state=expired) */
  expiredNow: number;
  /** its last claim or ack (a lease it holds now, its acks, the claims of its leases that expired) */
  lastSeenAt: string | null;
  /** since `since` (the last 60 minute rows) */
  acked: number;
  failed: number;
  expired: number;
  /** its leases an operator ended (released, or a message on one set aside) */
  released: number;
  /**
   * Likely dead or hung (SILENT_AFTER_SECONDS): it holds a lease past its current expiry, or it holds
   * leases and has not claimed, acked or extended one for SILENT_AFTER_SECONDS while another holder of
   * one of those groups claimed within a quarter of that time. A holder that extends its lease (a
   * heartbeat) is at work whatever it asked for at first; one alone in its groups is judged by its expiry.
   */
  silent: boolean;
  /** why: `expired` (a lease past its current expiry) or `quiet` (quiet while its group's peers work) */
  silentWhy: 'expired' | 'quiet' | null;
  /** seconds since its last claim, ack or extension of a lease it holds now (null: it holds none) */
  quietSeconds: number | null;
  /**
   * What its pop requests of this minute and the 4 before said (queen.holder_clients, written with
   * each instance's heartbeat): the address and user agent of the latest, how many pops and how
   * many of them came back empty; null when it popped in none of them.
   */
  client: HolderClient | null;
}

export interface HolderClient {
  address: string | null;
  userAgent: string | null;
  pops: number;
  emptyPops: number;
  lastPopAt: string;
}

export interface ConsumerList {
  now: string;
  since: string;
  total: number;
  consumers: Consumer[];
}

export const consumersQuery = z.object({
  page: queryInteger(1).optional(),
  pageSize: queryInteger(1, 1000).optional(),
});

/**
 * One row per lease holder (X-Queen-Consumer, else address and user agent): the leases it holds
 * now, from the cursors' partial lease index (the cost follows the leases held), and its last
 * hour from queen.holder_stats (sql/019), most recently seen first.
 */
export async function listConsumers(search: URLSearchParams): Promise<ConsumerList> {
  const f = parseWith(consumersQuery, Object.fromEntries(search), 'query');
  const pageSize = f.pageSize ?? 100;
  const { rows } = await readDb().execute<{
    now: string;
    since: string;
    total: number;
    consumers: Consumer[] | null;
  }>(sql`
    with bounds as (select date_trunc('minute', now()) - interval '59 minutes' as since),
    held as (
      select c.lease_holder as holder, count(distinct c.lease_id)::int as leases, count(*)::int as partitions,
             sum(c.lease_end_offset - c.committed_offset)::float8 as messages,
             count(*) filter (where c.lease_expires_at <= now())::int as expired_now,
             max(c.lease_acquired_at) as last_claim,
             max((select max(d.extended_at) from queen.deliveries d
                  where d.lease_id = c.lease_id and d.ended_at is null and d.partition_id = c.partition_id)) as last_extended
      from queen.cursors c
      where c.lease_id is not null and c.lease_holder is not null
      group by c.lease_holder
    ),
    history as (
      select h.holder, sum(h.acked)::float8 as acked,
             sum(h.failed)::float8 as failed, sum(h.expired)::float8 as expired, sum(h.released)::float8 as released,
             max(h.last_seen_at) as last_seen
      from queen.holder_stats h, bounds b
      where h.minute >= b.since
      group by h.holder
    ),
    c as (
      select coalesce(n.holder, x.holder) as holder, coalesce(n.leases, 0) as leases, coalesce(n.partitions, 0) as partitions,
             coalesce(n.messages, 0) as messages, coalesce(n.expired_now, 0) as "expiredNow",
             greatest(n.last_claim, x.last_seen) as last_seen,
             coalesce(x.acked, 0) as acked, coalesce(x.failed, 0) as failed,
             coalesce(x.expired, 0) as expired, coalesce(x.released, 0) as released,
             extract(epoch from now() - greatest(n.last_claim, n.last_extended, x.last_seen))::float8 as quiet
      from held n full join history x on x.holder = n.holder
    ),
    judged as (
      select c.*, case
        when c."expiredNow" > 0 then 'expired'
        when c.quiet >= ${SILENT_AFTER_SECONDS} and exists (
          select 1 from queen.cursors l
          join queen.group_members m on m.queue_id = l.queue_id and m.consumer_group = l.consumer_group and m.holder <> c.holder
          where l.lease_holder = c.holder and l.lease_id is not null
            and m.seen_at > now() - make_interval(secs => c.quiet / 4)) then 'quiet' end as why
      from c
    )
    select queen.iso(now()) as now, (select queen.iso(since) from bounds) as since, (select count(*)::int from c) as total,
           (select json_agg(p) from (
              select c.holder, c.leases, c.partitions, c.messages, c."expiredNow", queen.iso(c.last_seen) as "lastSeenAt",
                     c.acked, c.failed, c.expired, c.released, c.why is not null as silent, c.why as "silentWhy",
                     case when c.partitions > 0 then c.quiet end as "quietSeconds",
                     -- what its pop requests said of it in this minute and the 4 before (sql/032)
                     (select case when count(*) > 0 then json_build_object(
                               'address', (array_agg(k.address order by k.last_pop_at desc) filter (where k.address is not null))[1],
                               'userAgent', (array_agg(k.user_agent order by k.last_pop_at desc) filter (where k.user_agent is not null))[1],
                               'pops', sum(k.pops)::float8, 'emptyPops', sum(k.empty_pops)::float8,
                               'lastPopAt', queen.iso(max(k.last_pop_at))) end
                      from queen.holder_clients k
                      where k.holder = c.holder and k.minute >= date_trunc('minute', now()) - interval '4 minutes') as client
              from judged c order by c.last_seen desc nulls last, c.holder
              limit ${pageSize} offset ${((f.page ?? 1) - 1) * pageSize}) p) as consumers`);
  const r = rows[0];
  return { now: r.now, since: r.since, total: r.total, consumers: r.consumers ?? [] };
}
