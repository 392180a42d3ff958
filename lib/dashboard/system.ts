import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';

export interface SystemFacts {
  now: string;
  database: { name: string; sizeBytes: number; version: string; maxConnections: number };
  /** the largest relations of the queen schemas, indexes and TOAST included */
  largest: { name: string; bytes: number }[];
  /** this database's server processes by state (null: a background process) */
  connections: { state: string | null; count: number }[];
  /** open transactions, oldest first */
  transactions: {
    pid: number;
    state: string | null;
    application: string;
    client: string | null;
    seconds: number;
    waiting: string | null;
    query: string;
  }[];
  lifecycle: { runs: unknown[] };
  autovacuum: {
    enabled: boolean;
    running: number;
    tables: {
      name: string;
      liveRows: number;
      deadRows: number;
      lastAutovacuum: string | null;
      lastAutoanalyze: string | null;
      autovacuumCount: number;
    }[];
  };
  /** every live instance (seen in the last 30 s) with the figures its heartbeat wrote */
  instances: { id: string; startedAt: string; seenAt: string; facts: Record<string, number> | null }[];
}

/**
 * The System page: what PostgreSQL says of this database now (pg_database_size, pg_stat_activity,
 * pg_stat_user_tables, pg_stat_progress_vacuum), the lifecycle job's last runs and each instance's
 * process figures. One statement, so its figures are of one moment. Always the primary's: a
 * standby's pg_stat_* views describe the standby (its sessions, no vacuum), not the broker's database.
 */
export async function systemFacts(): Promise<SystemFacts> {
  const { rows } = await db().execute<{ facts: SystemFacts }>(sql`
    select jsonb_build_object(
      'now', queen.iso(now()),
      'database', jsonb_build_object(
        'name', current_database(),
        'sizeBytes', pg_database_size(current_database()),
        'version', current_setting('server_version'),
        'maxConnections', current_setting('max_connections')::int),
      'largest', (select coalesce(jsonb_agg(jsonb_build_object('name', x.name, 'bytes', x.bytes) order by x.bytes desc, x.name), '[]')
                  from (select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where n.nspname like 'queen%' and c.relkind in ('r', 'p')
                        order by 2 desc, 1 limit 10) x),
      'connections', (select coalesce(jsonb_agg(jsonb_build_object('state', x.state, 'count', x.n) order by x.n desc, x.state), '[]')
                      from (select a.state, count(*)::int as n from pg_stat_activity a
                            where a.datname = current_database() group by a.state) x),
      'transactions', (select coalesce(jsonb_agg(jsonb_build_object(
                          'pid', x.pid, 'state', x.state, 'application', x.application_name, 'client', x.client_addr::text,
                          'seconds', round(extract(epoch from now() - x.xact_start)::numeric, 1)::float8,
                          'waiting', x.wait_event_type || coalesce(': ' || x.wait_event, ''), 'query', left(x.query, 300))
                          order by x.xact_start, x.pid), '[]')
                       from (select * from pg_stat_activity a
                             where a.datname = current_database() and a.xact_start is not null and a.pid <> pg_backend_pid()
                             order by a.xact_start, a.pid limit 10) x),
      'lifecycle', jsonb_build_object('runs', coalesce((select s.value from queen.system_state s where s.key = 'lifecycle_runs'), '[]')),
      'autovacuum', jsonb_build_object(
        'enabled', current_setting('autovacuum')::boolean,
        'running', (select count(*)::int from pg_stat_progress_vacuum v where v.datname = current_database()),
        'tables', (select coalesce(jsonb_agg(jsonb_build_object(
                      'name', x.name, 'liveRows', x.n_live_tup, 'deadRows', x.n_dead_tup,
                      'lastAutovacuum', queen.iso(x.last_autovacuum), 'lastAutoanalyze', queen.iso(x.last_autoanalyze),
                      'autovacuumCount', x.autovacuum_count) order by x.n_dead_tup desc, x.name), '[]')
                   from (select t.schemaname || '.' || t.relname as name, t.n_live_tup, t.n_dead_tup, t.last_autovacuum,
                                t.last_autoanalyze, t.autovacuum_count
                         from pg_stat_user_tables t where t.schemaname like 'queen%'
                         order by t.n_dead_tup desc, 1 limit 15) x)),
      'instances', (select coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'startedAt', queen.iso(i.started_at),
                                                                  'seenAt', queen.iso(i.seen_at), 'facts', i.facts) order by i.started_at, i.id), '[]')
                    from queen.instances i where i.seen_at > now() - interval '30 seconds')
    ) as facts`);
  return rows[0].facts;
}
