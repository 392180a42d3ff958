import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';

interface Seen {
  minute: string;
  holder: string;
  address: string | null;
  userAgent: string | null;
  pops: number;
  empty: number;
  lastAt: string;
}

/**
 * What this instance knows of each lease holder's pop requests (address, user agent, pops and
 * empty pops per minute), counted in memory by the pop route and written to queen.holder_clients
 * (sql/032) with the heartbeat: one statement every 5 s for every holder served, nothing per pop.
 * A write that fails loses those seconds' counts (they are informational); rows go after an hour.
 */
class HolderClients {
  private seen = new Map<string, Seen>();

  record(holder: string, address: string | null, userAgent: string | null, empty: boolean): void {
    const now = new Date();
    const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString();
    const key = `${minute}\u0000${holder}`;
    let s = this.seen.get(key);
    if (!s) {
      if (this.seen.size >= 10_000) return; // bounded: a flood of made-up names cannot grow it
      s = { minute, holder, address, userAgent, pops: 0, empty: 0, lastAt: now.toISOString() };
      this.seen.set(key, s);
    }
    s.pops++;
    if (empty) s.empty++;
    s.address = address ?? s.address;
    s.userAgent = userAgent ?? s.userAgent;
    s.lastAt = now.toISOString();
  }

  async flush(instance: string): Promise<void> {
    const rows = [...this.seen.values()];
    this.seen = new Map();
    if (rows.length > 0)
      await db().execute(sql`
        insert into queen.holder_clients as t (minute, holder, instance, address, user_agent, pops, empty_pops, last_pop_at)
        select r.minute, r.holder, ${instance}, r.address, r.user_agent, r.pops, r.empty_pops, r.last_pop_at
        from jsonb_to_recordset(${JSON.stringify(
          rows.map((r) => ({
            minute: r.minute,
            holder: r.holder,
            address: r.address,
            user_agent: r.userAgent,
            pops: r.pops,
            empty_pops: r.empty,
            last_pop_at: r.lastAt,
          })),
        )}::jsonb) as r(minute timestamptz, holder text, address text, user_agent text, pops bigint, empty_pops bigint, last_pop_at timestamptz)
        on conflict (minute, holder, instance) do update
          set pops = t.pops + excluded.pops, empty_pops = t.empty_pops + excluded.empty_pops,
              address = coalesce(excluded.address, t.address), user_agent = coalesce(excluded.user_agent, t.user_agent),
              last_pop_at = greatest(t.last_pop_at, excluded.last_pop_at)`);
    await db().execute(sql`delete from queen.holder_clients where minute < now() - interval '1 hour'`);
  }
}

const slot = globalThis as unknown as { __queenHolderClients?: HolderClients };
export const holderClients = (slot.__queenHolderClients ??= new HolderClients());
