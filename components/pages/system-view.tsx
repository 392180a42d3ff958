'use client';
import type { SystemFacts } from '@/lib/dashboard/system';
import { bytes, count, duration, utc } from '@/lib/dashboard/format';
import { ListTable } from '../list-table';
import { useLiveQuery } from '../providers';
import { SYSTEM_PATH } from '../client/system';

interface LifecycleRun {
  at: string;
  by: string;
  more: boolean;
  partitionsVisited?: number;
  removedByOption?: Record<string, number>;
}

const cell = 'py-1.5 pr-3';
const num = 'py-1.5 pr-3 text-right tabular-nums';

/** Database and process health: Queen's System view, RabbitMQ's node page. */
export function SystemView({ initial }: { initial: SystemFacts }) {
  const { data = initial, error } = useLiveQuery<SystemFacts>(['system'], SYSTEM_PATH, initial);
  const totalConnections = data.connections.reduce((n, c) => n + c.count, 0);
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold">System</h1>
        <p className="text-sm text-muted">
          What PostgreSQL says of database <span className="font-mono">{data.database.name}</span> (PostgreSQL{' '}
          {data.database.version}) at {utc(data.now)}, the storage lifecycle job&apos;s last runs, and the process
          figures each live instance wrote with its last heartbeat (every 5 s).
        </p>
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      <dl className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4">
        <Figure label="Database size" value={bytes(data.database.sizeBytes)} testId="db-size" />
        <Figure
          label="Connections"
          value={`${count(totalConnections)} of ${count(data.database.maxConnections)}`}
          testId="connections-total"
        />
        <Figure label="Autovacuum" value={data.autovacuum.enabled ? 'on' : 'off'} testId="autovacuum" />
        <Figure label="Vacuums running" value={count(data.autovacuum.running)} testId="vacuums-running" />
      </dl>

      <section aria-labelledby="connections" className="space-y-2">
        <h2 id="connections" className="text-lg font-semibold">
          Connections by state
        </h2>
        <ListTable
          head={
            <>
              <th className="py-2 pr-3">State</th>
              <th className="pr-3 text-right">Connections</th>
            </>
          }
        >
          {data.connections.map((c) => (
            <tr
              key={c.state ?? 'background'}
              className="border-b border-zinc-100 dark:border-zinc-900"
              data-testid="connection-state"
            >
              <td className={cell}>{c.state ?? 'background process'}</td>
              <td className={num}>{count(c.count)}</td>
            </tr>
          ))}
        </ListTable>
      </section>

      <section aria-labelledby="transactions" className="space-y-2">
        <h2 id="transactions" className="text-lg font-semibold">
          Longest running transactions
        </h2>
        {data.transactions.length === 0 ? (
          <p className="text-sm text-muted">No other transaction is open.</p>
        ) : (
          <div className="overflow-x-auto">
            <ListTable
              head={
                <>
                  <th className="py-2 pr-3 text-right">Open for</th>
                  <th className="pr-3">State</th>
                  <th className="pr-3">Application</th>
                  <th className="cell-optional pr-3">Waiting on</th>
                  <th className="cell-optional pr-3">Query</th>
                  <th className="pr-3 text-right">PID</th>
                </>
              }
            >
              {data.transactions.map((t) => (
                <tr
                  key={t.pid}
                  className="border-b border-zinc-100 align-top dark:border-zinc-900"
                  data-testid="transaction"
                >
                  <td className={num}>{duration(t.seconds)}</td>
                  <td className={cell}>{t.state ?? '—'}</td>
                  <td className={`${cell} break-words`}>
                    {t.application || '—'}
                    {t.client && <span className="block text-xs text-muted">{t.client}</span>}
                  </td>
                  <td className={`cell-optional ${cell}`}>{t.waiting ?? '—'}</td>
                  <td className={`cell-optional ${cell} max-w-md truncate font-mono text-xs`} title={t.query}>
                    {t.query}
                  </td>
                  <td className={num}>{t.pid}</td>
                </tr>
              ))}
            </ListTable>
          </div>
        )}
      </section>

      <section aria-labelledby="lifecycle" className="space-y-2">
        <h2 id="lifecycle" className="text-lg font-semibold">
          Lifecycle job: last runs
        </h2>
        {data.lifecycle.runs.length === 0 ? (
          <p className="text-sm text-muted">
            No run recorded yet (one runs every RETENTION_INTERVAL_MS on one instance).
          </p>
        ) : (
          <div className="overflow-x-auto">
            <ListTable
              head={
                <>
                  <th className="py-2 pr-3">When (UTC)</th>
                  <th className="cell-optional pr-3">Instance</th>
                  <th className="pr-3 text-right">Partitions visited</th>
                  <th className="pr-3 text-right">Messages removed</th>
                  <th className="pr-3">More due</th>
                </>
              }
            >
              {(data.lifecycle.runs as LifecycleRun[]).map((r) => (
                <tr
                  key={`${r.at}-${r.by}`}
                  className="border-b border-zinc-100 dark:border-zinc-900"
                  data-testid="lifecycle-run"
                >
                  <td className={cell}>{utc(r.at)}</td>
                  <td className={`cell-optional ${cell} wrap-anywhere font-mono text-xs`}>{r.by}</td>
                  <td className={num}>{count(r.partitionsVisited ?? 0)}</td>
                  <td className={num}>{count(Object.values(r.removedByOption ?? {}).reduce((n, v) => n + v, 0))}</td>
                  <td className={cell}>{r.more ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </ListTable>
          </div>
        )}
      </section>

      <section aria-labelledby="vacuum" className="space-y-2">
        <h2 id="vacuum" className="text-lg font-semibold">
          Autovacuum: tables with the most dead rows
        </h2>
        <div className="overflow-x-auto">
          <ListTable
            head={
              <>
                <th className="py-2 pr-3">Table</th>
                <th className="pr-3 text-right">Dead rows</th>
                <th className="cell-optional pr-3 text-right">Live rows</th>
                <th className="pr-3">Last autovacuum (UTC)</th>
                <th className="cell-optional pr-3">Last autoanalyze (UTC)</th>
                <th className="cell-optional pr-3 text-right">Autovacuums</th>
              </>
            }
          >
            {data.autovacuum.tables.map((t) => (
              <tr key={t.name} className="border-b border-zinc-100 dark:border-zinc-900" data-testid="vacuum-table">
                <td className={`${cell} wrap-anywhere font-mono text-xs`}>{t.name}</td>
                <td className={num}>{count(t.deadRows)}</td>
                <td className={`cell-optional ${num}`}>{count(t.liveRows)}</td>
                <td className={cell}>{t.lastAutovacuum ? utc(t.lastAutovacuum) : 'never'}</td>
                <td className={`cell-optional ${cell}`}>{t.lastAutoanalyze ? utc(t.lastAutoanalyze) : 'never'}</td>
                <td className={`cell-optional ${num}`}>{count(t.autovacuumCount)}</td>
              </tr>
            ))}
          </ListTable>
        </div>
      </section>

      <section aria-labelledby="tables" className="space-y-2">
        <h2 id="tables" className="text-lg font-semibold">
          Largest tables
        </h2>
        <ListTable
          head={
            <>
              <th className="py-2 pr-3">Table</th>
              <th className="pr-3 text-right">Size (indexes and TOAST included)</th>
            </>
          }
        >
          {data.largest.map((t) => (
            <tr key={t.name} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${cell} wrap-anywhere font-mono text-xs`}>{t.name}</td>
              <td className={num}>{bytes(t.bytes)}</td>
            </tr>
          ))}
        </ListTable>
      </section>

      <section aria-labelledby="instances" className="space-y-2">
        <h2 id="instances" className="text-lg font-semibold">
          Instances
        </h2>
        <div className="overflow-x-auto">
          <ListTable
            head={
              <>
                <th className="py-2 pr-3">Instance</th>
                <th className="pr-3 text-right">Up</th>
                <th className="pr-3 text-right">Memory (RSS)</th>
                <th className="cell-optional pr-3 text-right">Heap used</th>
                <th className="pr-3 text-right">Parked polls</th>
                <th className="cell-optional pr-3 text-right">Pool (busy / idle / waiting)</th>
                <th className="cell-optional pr-3">Last heartbeat (UTC)</th>
              </>
            }
          >
            {data.instances.map((i) => {
              const f = i.facts;
              return (
                <tr key={i.id} className="border-b border-zinc-100 dark:border-zinc-900" data-testid="instance">
                  <td className={`${cell} wrap-anywhere font-mono text-xs`}>
                    {i.id}
                    {f && <span className="block text-muted">pid {f.pid}</span>}
                  </td>
                  <td className={num}>{f ? duration(f.uptimeSeconds) : '—'}</td>
                  <td className={num}>{f ? bytes(f.rssBytes) : '—'}</td>
                  <td className={`cell-optional ${num}`}>{f ? bytes(f.heapUsedBytes) : '—'}</td>
                  <td className={num}>{f ? `${count(f.parkedPolls)} in ${count(f.parkedScopes)} scopes` : '—'}</td>
                  <td className={`cell-optional ${num}`}>
                    {f ? `${count(f.poolTotal - f.poolIdle)} / ${count(f.poolIdle)} / ${count(f.poolWaiting)}` : '—'}
                  </td>
                  <td className={`cell-optional ${cell}`}>{utc(i.seenAt)}</td>
                </tr>
              );
            })}
          </ListTable>
        </div>
      </section>
    </div>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="rounded border border-zinc-200 p-3 dark:border-zinc-800">
      <dt className="text-xs uppercase tracking-wide text-muted">{label}</dt>
      <dd className="text-lg font-semibold tabular-nums" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}
