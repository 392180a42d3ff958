'use client';
import Link from 'next/link';
import type { Group, GroupList, GroupQueue } from '@/lib/dashboard/groups';
import { GROWING_MINUTES, GROWTH_MIN_MESSAGES, GROWTH_MIN_RATIO } from '@/lib/dashboard/signals';
import { count, duration, plural, utc } from '@/lib/dashboard/format';
import { groupsHref, leasesHref, queueHref } from '@/lib/dashboard/links';
import { withSearch } from '@/lib/dashboard/query-string';
import { ListTable } from '../list-table';
import { NameText } from '../name-text';
import { useLiveQuery } from '../providers';
import { RangePicker, rangeLabel } from '../range-picker';
import { UrlTextFilter, useUrlState } from '../url-state';
import { groupsPath } from '../client/consumer-groups';

/** A lag trend small enough for a row: a line over the window, from 0 to its largest value. */
function LagTrend({
  points,
  minutes,
  now,
  label,
}: {
  points: [number, number][];
  minutes: number;
  now: string;
  label: string;
}) {
  const end = Date.parse(now) / 1000;
  const start = end - minutes * 60;
  const max = Math.max(1, ...points.map((p) => p[1]));
  const xy = points.map(
    ([t, v]) => `${(((t - start) / (end - start)) * 120).toFixed(1)},${(30 - (v / max) * 28).toFixed(1)}`,
  );
  const last = points.at(-1);
  const summary = last
    ? `${label}: lag ${count(last[1])} at ${new Date(last[0] * 1000).toISOString().slice(11, 19)} UTC, at most ${count(max)} over the last ${rangeLabel(minutes)}`
    : `${label}: no lag samples yet`;
  return (
    <svg
      width="120"
      height="32"
      viewBox="0 0 120 32"
      role="img"
      aria-label={summary}
      className="overflow-visible"
      data-testid="lag-trend"
    >
      <title>{summary}</title>
      <line x1="0" y1="30" x2="120" y2="30" className="stroke-zinc-200 dark:stroke-zinc-800" strokeWidth="1" />
      {xy.length === 1 && <circle cx={xy[0].split(',')[0]} cy={xy[0].split(',')[1]} r="2" fill="#d97706" />}
      {xy.length > 1 && <polyline points={xy.join(' ')} fill="none" stroke="#d97706" strokeWidth="1.5" />}
    </svg>
  );
}

export function GroupsView({
  initial,
  filters,
}: {
  initial: GroupList;
  filters: { group?: string; minutes?: string };
}) {
  const { set } = useUrlState();
  const { data = initial, error } = useLiveQuery<GroupList>(['groups', filters], groupsPath(filters), initial);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Consumer groups</h1>
        <p className="text-sm text-muted">
          Every group with each queue it reads: lag in messages and in time (the oldest message it has not done), its
          trend, members (holders that claimed in the last {data.memberMinutes} min), leases, pauses and subscription.
          Growing lags first: a lag is growing when it is at least {GROWTH_MIN_MESSAGES} messages and{' '}
          {GROWTH_MIN_RATIO * 100}% above where it was {GROWING_MINUTES} min ago and stayed above it in every sample
          since.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <UrlTextFilter name="group" label="Group" match="exact" value={filters.group} />
        <div className="flex flex-col">
          <span className="text-xs text-muted">Trend range</span>
          <RangePicker
            minutes={data.minutes}
            onChange={(m) => set({ minutes: m === 60 ? null : m })}
            label="Lag trend range"
          />
        </div>
        <span className="ml-auto text-muted" data-testid="group-count">
          {plural(data.groups.length, 'group')}
        </span>
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      <div className="space-y-4">
        {data.groups.map((g) => (
          <GroupSection key={g.group} group={g} minutes={data.minutes} now={data.now} />
        ))}
      </div>
      {data.groups.length === 0 && (
        <p className="py-6 text-center text-sm text-muted">
          {filters.group ? `No group named ${filters.group}.` : 'No consumer group yet.'}
        </p>
      )}
      <p className="text-xs text-muted">Server time {utc(data.now)}</p>
    </div>
  );
}

function GroupSection({ group: g, minutes, now }: { group: Group; minutes: number; now: string }) {
  return (
    <section
      aria-label={`Group ${g.group}`}
      className="rounded border border-zinc-200 dark:border-zinc-800"
      data-testid={`group-${g.group}`}
    >
      <div className="flex flex-wrap items-baseline gap-x-5 gap-y-1 border-b border-zinc-200 px-3 py-2 text-sm dark:border-zinc-800">
        <h2 className="font-mono font-semibold wrap-anywhere">
          <Link href={groupsHref({ group: g.group })} className="hover:underline">
            {g.group}
          </Link>
        </h2>
        <span>
          lag{' '}
          <strong className="tabular-nums" data-testid="group-lag">
            {count(g.lag)}
          </strong>
          {g.lagSeconds !== null ? (
            <>
              {' '}
              · oldest waits <strong>{duration(g.lagSeconds)}</strong>
            </>
          ) : null}
        </span>
        {g.growing && (
          <span className="font-medium text-amber-700 dark:text-amber-400" data-testid="growing">
            lag growing
          </span>
        )}
        <span>
          {plural(g.liveLeases, 'live lease')}
          {g.expiredLeases ? (
            <span className="font-medium text-red-700 dark:text-red-400"> · {count(g.expiredLeases)} expired</span>
          ) : null}
        </span>
        {g.paused > 0 && (
          <span className="text-amber-700 dark:text-amber-400">{plural(g.paused, 'paused cursor')}</span>
        )}
        <span
          className="text-muted"
          data-testid="members"
          title={g.members.map((m) => `${m.holder} (${utc(m.seenAt)})`).join('\n')}
        >
          {g.members.length === 0 ? (
            'no member seen lately'
          ) : (
            <>
              members:{' '}
              {g.members.slice(0, 5).map((m) => (
                <Link
                  key={m.holder}
                  href={leasesHref({ holder: m.holder })}
                  className="mr-1 font-mono text-sky-700 hover:underline dark:text-sky-400"
                >
                  {m.holder}
                </Link>
              ))}
              {g.members.length > 5 ? `and ${g.members.length - 5} more` : ''}
            </>
          )}
        </span>
      </div>
      <div className="overflow-x-auto">
        <ListTable
          head={
            <>
              <th className="px-3 py-1">Queue</th>
              <th className="pr-3 text-right">Lag</th>
              <th className="pr-3 text-right">Oldest waits</th>
              <th className="cell-optional pr-3">Trend</th>
              <th className="pr-3 text-right">Leases live / expired</th>
              <th className="cell-optional pr-3 text-right">Paused</th>
              <th className="cell-optional pr-3">Subscription</th>
            </>
          }
        >
          {g.queues.map((q) => (
            <QueueLine key={q.queue} group={g.group} q={q} minutes={minutes} now={now} />
          ))}
        </ListTable>
      </div>
    </section>
  );
}

function QueueLine({ group, q, minutes, now }: { group: string; q: GroupQueue; minutes: number; now: string }) {
  return (
    <tr className="border-t border-zinc-100 align-top dark:border-zinc-900" data-testid={`group-queue-${q.queue}`}>
      <td className="px-3 py-1.5 break-words">
        <Link
          href={queueHref(q.queue, { group, sort: 'lag' })}
          className="font-mono text-sky-700 hover:underline dark:text-sky-400"
        >
          <NameText text={q.queue} />
        </Link>
        <div className="text-xs text-muted">{plural(q.partitions, 'partition')}</div>
      </td>
      <td className="pr-3 text-right tabular-nums">
        <span data-testid="lag">{count(q.lag)}</span>
        {q.growing && (
          <div className="text-xs font-medium text-amber-700 dark:text-amber-400" data-testid="growing-from">
            up from {count(q.growing.from)}
          </div>
        )}
      </td>
      <td className="pr-3 text-right tabular-nums" data-testid="lag-seconds">
        {q.lagSeconds === null ? '—' : duration(q.lagSeconds)}
      </td>
      <td className="cell-optional pr-3">
        <LagTrend points={q.trend} minutes={minutes} now={now} label={`${group} on ${q.queue}`} />
      </td>
      <td className="pr-3 text-right tabular-nums">
        <Link
          href={withSearch('/leases', { queue: q.queue, group })}
          className="hover:underline"
          data-testid="live-leases"
        >
          {count(q.liveLeases)}
        </Link>{' '}
        /{' '}
        <Link
          href={withSearch('/leases', { queue: q.queue, group, state: 'expired' })}
          className={`hover:underline ${q.expiredLeases ? 'font-semibold text-red-700 dark:text-red-400' : ''}`}
          data-testid="expired-leases"
        >
          {count(q.expiredLeases)}
        </Link>
      </td>
      <td className="cell-optional pr-3 text-right tabular-nums" data-testid="paused">
        {count(q.paused)}
      </td>
      <td className="cell-optional pr-3 text-xs">
        {q.subscription
          ? `${q.subscription.mode}${q.subscription.startAt ? ` from ${utc(q.subscription.startAt)}` : ''}`
          : 'all (no record)'}
      </td>
    </tr>
  );
}
