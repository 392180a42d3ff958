'use client';
import Link from 'next/link';
import type { Overview } from '@/lib/dashboard/overview';
import { overviewLinks } from '@/lib/dashboard/links';
import { count, duration, utc } from '@/lib/dashboard/format';
import { QueueSparkline } from '../charts/sparkline';
import { ListTable } from '../list-table';
import { MaintenanceToggle } from '../maintenance';
import { NameText } from '../name-text';
import { useLiveQuery } from '../providers';
import { OVERVIEW_PATH } from '../client/system';

const rank = (q: Overview['queues'][number]) =>
  q.problems.some((p) => p.level === 'alert') ? 0 : q.problems.length ? 1 : 2;

export function OverviewView({ initial }: { initial: Overview }) {
  const { data = initial, error } = useLiveQuery<Overview>(['overview'], OVERVIEW_PATH, initial);
  const queues = [...data.queues].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  const alerts = queues.filter((q) => rank(q) === 0).length;
  const warnings = queues.filter((q) => rank(q) === 1).length;
  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Overview</h1>
          <p
            className={`text-sm ${alerts ? 'font-medium text-red-600 dark:text-red-400' : warnings ? 'text-amber-700 dark:text-amber-400' : 'text-muted'}`}
            data-testid="health-summary"
          >
            {queues.length === 0
              ? 'No queues yet. Push a message or configure a queue to create one.'
              : alerts
                ? `${alerts} of ${queues.length} queues need attention now`
                : warnings
                  ? `${warnings} of ${queues.length} queues have warnings`
                  : `All ${queues.length} queues healthy`}
          </p>
        </div>
        <section
          className={`flex items-center gap-3 rounded border px-3 py-2 text-sm ${data.maintenance.enabled ? 'border-red-300 bg-red-50 dark:border-red-800 dark:bg-red-950' : 'border-zinc-200 dark:border-zinc-800'}`}
          aria-label="Pop maintenance"
        >
          <span>
            Pop maintenance: <strong data-testid="maintenance-state">{data.maintenance.enabled ? 'ON' : 'off'}</strong>
          </span>
          <MaintenanceToggle enabled={data.maintenance.enabled} />
        </section>
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      {queues.length > 0 && (
        <div className="overflow-x-auto">
          <ListTable
            head={
              <>
                <th className="py-2 pr-3">Queue</th>
                <th className="cell-optional pr-3 text-right">Partitions</th>
                <th className="cell-optional pr-3 text-right">Groups</th>
                <th className="cell-optional pr-3 text-right">Messages</th>
                <th className="pr-3 text-right" title="The largest lag of any group">
                  Pending
                </th>
                <th className="cell-optional pr-3 text-right">Oldest pending</th>
                <th className="pr-3 text-right">Leases live / expired</th>
                <th className="cell-optional pr-3 text-right">Redeliveries</th>
                <th className="pr-3 text-right">Dead letters</th>
                <th className="pr-3">Status</th>
              </>
            }
          >
            {queues.map((q) => {
              const to = overviewLinks(q.name);
              const figure = (n: number, href: string, what: string, tone = '') => (
                <Link href={href} aria-label={`${count(n)} ${what} on ${q.name}`} className={`hover:underline ${tone}`}>
                  {count(n)}
                </Link>
              );
              return (
                <tr
                  key={q.name}
                  className="border-b border-zinc-100 align-top dark:border-zinc-900"
                  data-testid={`queue-row-${q.name}`}
                >
                  <td className="py-2 pr-3 break-words">
                    <Link href={to.queue} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
                      {q.name ? <NameText text={q.name} /> : '(empty name)'}
                    </Link>
                    <QueueSparkline queue={q.name} />
                  </td>
                  <td className="cell-optional pr-3 text-right tabular-nums" data-testid="partitions">
                    {figure(q.partitions, to.queue, 'partitions')}
                  </td>
                  <td className="cell-optional pr-3 text-right tabular-nums" data-testid="groups">
                    {figure(q.groups, to.queue, 'consumer groups')}
                  </td>
                  <td className="cell-optional pr-3 text-right tabular-nums">{count(q.messages)}</td>
                  <td className="pr-3 text-right tabular-nums" data-testid="pending">
                    {figure(q.pending, to.oldestPending, 'pending messages')}
                  </td>
                  <td className="cell-optional pr-3 text-right tabular-nums">
                    {q.oldestPendingSeconds === null ? (
                      '—'
                    ) : (
                      <Link href={to.oldestPending} className="hover:underline">
                        {duration(q.oldestPendingSeconds)}
                      </Link>
                    )}
                  </td>
                  <td className="pr-3 text-right tabular-nums">
                    <span data-testid="live-leases">{figure(q.liveLeases, to.leases('live'), 'live leases')}</span> /{' '}
                    <span data-testid="expired-leases">
                      {figure(
                        q.expiredLeases,
                        to.leases('expired'),
                        'expired leases',
                        q.expiredLeases ? 'font-semibold text-red-700 dark:text-red-400' : '',
                      )}
                    </span>
                  </td>
                  <td
                    className="cell-optional pr-3 text-right tabular-nums"
                    data-testid="redeliveries"
                    title="per partition and group on the queue page"
                  >
                    {figure(q.redeliveries, to.queue, 'redeliveries')}
                  </td>
                  <td className="pr-3 text-right tabular-nums" data-testid="dead-letters">
                    {figure(
                      q.deadLetters,
                      to.deadLetters,
                      'dead letters',
                      q.deadLetters ? 'text-amber-700 dark:text-amber-400' : '',
                    )}
                  </td>
                  <td className="pr-3">
                    {q.problems.length === 0 ? (
                      <span
                        className="rounded bg-emerald-50 px-1.5 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300"
                        data-testid="status-ok"
                      >
                        ok
                      </span>
                    ) : (
                      <ul className="space-y-0.5">
                        {q.problems.map((p) => (
                          <li key={p.text}>
                            <Link
                              href={p.href}
                              className={`hover:underline ${p.level === 'alert' ? 'font-medium text-red-700 dark:text-red-400' : 'text-amber-700 dark:text-amber-400'}`}
                            >
                              {p.text}
                            </Link>
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              );
            })}
          </ListTable>
        </div>
      )}
      <p className="text-xs text-muted">
        Server time {utc(data.now)} · read in {data.tookMs} ms
      </p>
    </div>
  );
}
