import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { log } from '@/lib/log.mjs';
import { instance } from './instance';

/** What the live view shows: pushes, claims, acks, releases, expiries, pauses, maintenance, seeks. */
export interface BrokerEvent {
  type: string;
  at: string;
  queue?: string;
  group?: string;
  /** the groups of an event about several (a requeue or discard of dead letters) */
  groups?: string[];
  partitions?: { queue?: string; group?: string }[];
  [key: string]: unknown;
}

export interface EventFilter {
  queue?: string;
  group?: string;
}

function matches(e: BrokerEvent, f: EventFilter): boolean {
  const parts = e.partitions ?? [];
  const queues = [e.queue, ...parts.map((p) => p.queue)].filter((q): q is string => q !== undefined);
  const groups = [e.group, ...(e.groups ?? []), ...parts.map((p) => p.group)].filter(
    (g): g is string => g !== undefined,
  );
  // An event about no queue (maintenance) concerns every queue; one about no group, every group.
  return (
    (!f.queue || queues.length === 0 || queues.includes(f.queue)) &&
    (!f.group || groups.length === 0 || groups.includes(f.group))
  );
}

type Subscriber = { filter: EventFilter; send: (e: BrokerEvent) => void };

/**
 * Fans the events every instance receives (LISTEN queen_events / queen_push) out to this
 * instance's live-view streams. Lease expiries happen without any statement, so while someone
 * watches, the hub looks for leases that expired since its last look, once a second.
 */
class EventHub {
  private subscribers = new Set<Subscriber>();
  private expiryTimer?: NodeJS.Timeout;
  private lastExpiryCheck?: string;

  get watched(): boolean {
    return this.subscribers.size > 0;
  }

  /** Resolves once every instance's SQL knows that events are wanted (they are sent only then). */
  async subscribe(filter: EventFilter, send: (e: BrokerEvent) => void): Promise<() => void> {
    const s = { filter, send };
    this.subscribers.add(s);
    this.expiryTimer ??= setInterval(() => void this.publishExpiries(), 1000);
    if (this.subscribers.size === 1) await instance.beat().catch(() => {});
    return () => {
      this.subscribers.delete(s);
      if (this.subscribers.size === 0 && this.expiryTimer) {
        clearInterval(this.expiryTimer);
        this.expiryTimer = undefined;
        this.lastExpiryCheck = undefined;
        void instance.beat().catch(() => {});
      }
    };
  }

  publish(e: BrokerEvent): void {
    for (const s of this.subscribers) if (matches(e, s.filter)) s.send(e);
  }

  private async publishExpiries(): Promise<void> {
    try {
      const { rows } = await db().execute<{ checked: string; expired: BrokerEvent[] }>(sql`
        select queen.iso(now()) as checked, coalesce((
          select json_agg(json_build_object(
                   'type', 'expiry', 'at', queen.iso(c.lease_expires_at), 'leaseId', c.lease_id, 'queue', q.name,
                   'partition', p.name, 'partitionId', c.partition_id, 'group', c.consumer_group, 'holder', c.lease_holder,
                   'from', c.committed_offset + 1, 'to', c.lease_end_offset)
                 order by c.lease_expires_at)
          from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
          where c.lease_id is not null and c.lease_expires_at <= now()
            and c.lease_expires_at > coalesce(${this.lastExpiryCheck ?? null}::timestamptz, now() - interval '1 second')), '[]') as expired`);
      this.lastExpiryCheck = rows[0].checked;
      for (const e of rows[0].expired) this.publish(e);
    } catch (err) {
      log('events').warn({ err: (err as Error).message }, 'lease expiry check failed');
    }
  }
}

const slot = globalThis as unknown as { __queenEvents?: EventHub };
export const events = (slot.__queenEvents ??= new EventHub());
