'use client';
import Link from 'next/link';
import type { CursorRow, QueuePage } from '@/lib/dashboard/queue';
import { bytes, count, duration, shortId, utc } from '@/lib/dashboard/format';
import { auditHref, deadLettersHref, messageAtHref, partitionHref } from '@/lib/dashboard/links';
import { RateChart } from '../charts/rate-chart';
import { Countdown } from '../countdown';
import { forceReleaseDialog } from '../lease-release-preview';
import { ListTable, pageRange } from '../list-table';
import { NameText } from '../name-text';
import { OffsetBar } from '../offset-bar';
import { PageButtons } from '../page-buttons';
import { QueueActions } from '../queue-actions';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { SeekAction } from '../seek-action';
import { setAsideDialog } from '../set-aside-dialog';
import { useKeptRows } from '../kept-rows';
import { UrlTextFilter, useUrlState } from '../url-state';
import { deleteGroupOnQueue } from '../client/consumer-groups';
import { pauseCursor } from '../client/cursors';
import { queuePagePath } from '../client/queues';

function apiPath(queue: string, p: QueuePage['params']) {
  const qs = new URLSearchParams({ page: String(p.page), pageSize: String(p.pageSize), sort: p.sort });
  if (p.group) qs.set('group', p.group);
  if (p.partition) qs.set('partition', p.partition);
  if (p.partitionIs !== undefined) qs.set('partitionIs', p.partitionIs);
  return queuePagePath(queue, qs);
}

export function QueueView({ initial }: { initial: QueuePage }) {
  const { set } = useUrlState();
  const p = initial.params;
  const { data = initial, error } = useLiveQuery<QueuePage>(
    ['queue', initial.queue.name, p],
    apiPath(initial.queue.name, p),
    initial,
  );
  const q = data.queue;
  const range = pageRange(p.page, p.pageSize, data.total, data.rows.length);
  const { shown, keep } = useKeptRows(data.rows, rowKey, JSON.stringify(p));
  return (
    <div className="space-y-4">
      <div>
        <p className="text-sm text-muted">
          <Link href="/" className="hover:underline">
            Overview
          </Link>{' '}
          /
        </p>
        <h1 className="font-mono text-2xl font-semibold break-words">
          {q.name ? <NameText text={q.name} /> : '(empty name)'}
        </h1>
        <p className="text-sm text-muted">
          namespace <span className="font-mono">{q.namespace || '—'}</span> · task{' '}
          <span className="font-mono">{q.task || '—'}</span> · lease {q.leaseTime} s · {count(q.partitions)} partitions
          · groups: {q.groups.length ? q.groups.join(', ') : 'none yet'}
        </p>
        <StorageLine storage={q.storage} />
        <QueueActions queue={{ name: q.name, partitions: q.partitions, groups: q.groups, stored: q.storage.stored }} />
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <label className="flex flex-col">
          <span className="text-xs text-muted">Group</span>
          <select
            value={p.group ?? ''}
            onChange={(e) => set({ group: e.target.value, page: null })}
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
            aria-label="Group"
          >
            <option value="">all groups</option>
            {q.groups.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        {p.partitionIs !== undefined ? (
          <UrlTextFilter name="partitionIs" label="Partition" match="exact" value={p.partitionIs} />
        ) : (
          <UrlTextFilter name="partition" label="Partition" match="contains" value={p.partition} />
        )}
        <label className="flex flex-col">
          <span className="text-xs text-muted">Sort</span>
          <select
            value={p.sort}
            onChange={(e) => set({ sort: e.target.value, page: null })}
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900"
            aria-label="Sort"
          >
            <option value="attention">needs attention first</option>
            <option value="lag">oldest pending first</option>
            <option value="partition">partition name</option>
          </select>
        </label>
        <div className="ml-auto flex items-center gap-2">
          <span className="text-muted" data-testid="row-range">
            rows {count(range.first)}–{count(range.last)} of {count(data.total)}
          </span>
          <PageButtons page={p.page} hasNext={range.hasNext} />
        </div>
      </div>
      {p.group && <GroupActions queue={q.name} group={p.group} />}
      <RateChart queue={q.name} group={p.group} />
      {error && (
        <p role="alert" className="text-sm text-red-600">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      <div className="overflow-x-auto">
        <ListTable
          paging={{ range, page: p.page, pageSize: p.pageSize }}
          empty={
            data.total === 0 &&
            shown.length === 0 && <p className="py-6 text-center text-sm text-muted">No partitions match.</p>
          }
          head={
            <>
              <th className="py-2 pr-3">Partition</th>
              <th className="pr-3">Group</th>
              <th className="cell-optional pr-3">Committed → leased → head</th>
              <th className="pr-3 text-right">Lag</th>
              <th className="pr-3">Lease</th>
              <th
                className="cell-optional pr-3 text-right"
                title="acked inside the lease / redeliveries / failures / dead letters"
              >
                Acked · redel. · fail · DLQ
              </th>
              <th className="cell-pinned pr-3">Pause</th>
            </>
          }
        >
          {shown.map((r) => (
            <CursorLine key={rowKey(r)} row={r} queue={q.name} onActed={keep} />
          ))}
        </ListTable>
      </div>
      <p className="text-xs text-muted" data-testid="server-timing">
        Server time {utc(data.now)} · read in {data.tookMs} ms
      </p>
    </div>
  );
}

const rowKey = (r: CursorRow) => `${r.partitionId}/${r.group}`;

function CursorLine({
  row: r,
  queue,
  onActed,
}: {
  row: CursorRow;
  queue: string;
  onActed: (row: CursorRow, mark: string) => void;
}) {
  const where = `${r.partition}/${r.group}`;
  const kept = () => onActed(r, '');
  return (
    <tr
      className={`border-b border-zinc-100 align-top dark:border-zinc-900 ${r.leaseState === 'expired' ? 'bg-red-50 dark:bg-red-950/40' : ''}`}
      data-testid={`cursor-${r.partition}-${r.group ?? ''}`}
    >
      <td className="py-2 pr-3 font-mono wrap-anywhere">
        <Link
          href={partitionHref(queue, r.partition, { group: r.group })}
          className="text-sky-700 hover:underline dark:text-sky-400"
          title="Browse its messages by offset"
        >
          {r.partition}
        </Link>
      </td>
      <td className="pr-3 font-mono wrap-anywhere">{r.group ?? <span className="text-muted">no group yet</span>}</td>
      <td className="cell-optional pr-3">
        <OffsetBar committed={r.committed} leaseEnd={r.leaseEnd} head={r.head} leaseState={r.leaseState} />
      </td>
      <td className="pr-3 text-right tabular-nums">
        <div data-testid="lag">{count(r.lag)}</div>
        <div className="text-xs text-muted">{r.timeLagSeconds === null ? '' : duration(r.timeLagSeconds)}</div>
      </td>
      <td className="pr-3 break-words">
        {r.leaseId ? (
          <div className="space-y-0.5">
            <div>
              <Countdown expiresAt={r.expiresAt} />
            </div>
            <div className="font-mono text-xs">
              <span className="2xl:hidden" title={r.leaseId}>
                {shortId(r.leaseId)}
              </span>
              <span className="hidden whitespace-nowrap 2xl:inline" data-testid="lease-id">
                {r.leaseId}
              </span>
              {r.extensions ? ` · extended ×${r.extensions}` : ''}
            </div>
            <div className="font-mono text-xs text-muted wrap-anywhere" title={`acquired ${utc(r.acquiredAt)}`}>
              {r.holder ?? 'unknown holder'}
            </div>
            <ReasonAction
              label="Force release"
              accessibleName={`Force release lease ${r.leaseId} on ${where}`}
              {...forceReleaseDialog(r.leaseId)}
              onDone={kept}
            />
            {r.leaseEnd !== null && (
              <div className="text-xs">
                span{' '}
                <Link
                  href={messageAtHref(r.partitionId, r.committed + 1)}
                  className="text-sky-700 hover:underline dark:text-sky-400"
                  aria-label={`First message of span ${r.committed + 1}–${r.leaseEnd} on ${r.partition}/${r.group}`}
                >
                  {r.committed + 1}
                </Link>
                –{r.leaseEnd}
              </div>
            )}
          </div>
        ) : (
          <span className="text-muted">none</span>
        )}
      </td>
      <td className="cell-optional pr-3 text-right tabular-nums">
        {r.ackedInLease} · {count(r.redeliveries)} · {count(r.failures)} ·{' '}
        {r.deadLetters && r.group ? (
          <Link
            href={deadLettersHref({ queue, partition: r.partition, group: r.group })}
            className="text-sky-700 hover:underline dark:text-sky-400"
            aria-label={`Dead letters of ${r.partition}/${r.group} on ${queue}`}
            data-testid="dead-letters"
          >
            {count(r.deadLetters)}
          </Link>
        ) : (
          count(r.deadLetters)
        )}
      </td>
      <td className="cell-pinned pr-3">
        {r.group === null ? null : r.paused ? (
          <div className="space-y-0.5">
            <span className="font-medium text-amber-700 dark:text-amber-400" data-testid="paused">
              paused
            </span>
            <div className="text-xs text-muted">
              {r.pausedReason}
              {r.pausedBy ? ` — ${r.pausedBy}` : ''}
              {r.pausedUntil ? `, until ${utc(r.pausedUntil)}` : ''}
            </div>
            <ReasonAction
              label="Resume"
              accessibleName={`Resume ${where}`}
              title={`Resume ${r.partition} for ${r.group}?`}
              confirmLabel="Resume"
              description={
                <>
                  Pops of <strong>{r.group}</strong> claim from partition <strong>{r.partition}</strong> of {queue}{' '}
                  again.
                </>
              }
              success={`Resumed ${where} on ${queue}`}
              onDone={kept}
              run={(reason) =>
                pauseCursor(r.partitionId, r.group!, {
                  paused: false,
                  reason,
                })
              }
            />
          </div>
        ) : (
          <ReasonAction
            label="Pause"
            accessibleName={`Pause ${where}`}
            title={`Pause ${r.partition} for ${r.group}?`}
            timeField={{ label: 'Resume automatically at' }}
            description={
              <>
                Pause consumption of partition <strong>{r.partition}</strong> by group <strong>{r.group}</strong> on
                queue {queue}: its pops skip this partition until it is resumed. A live lease is not ended.
              </>
            }
            confirmLabel="Pause"
            success={`Paused ${where} on ${queue}`}
            onDone={kept}
            run={(reason, until) =>
              pauseCursor(r.partitionId, r.group!, {
                paused: true,
                reason,
                until,
              })
            }
          />
        )}
        {r.group !== null && r.lag > 0 && looksStuck(r) && <FirstMessageActions row={r} queue={queue} onDone={kept} />}
        {r.group !== null && (
          <div>
            <Link
              href={auditHref({ queue, partitionId: r.partitionId, group: r.group })}
              aria-label={`Audit log of ${where}`}
              className="text-xs text-sky-700 hover:underline dark:text-sky-400"
            >
              audit
            </Link>
          </div>
        )}
      </td>
    </tr>
  );
}

/**
 * Whether the cursor looks stuck on its next message, so the ways out are offered on its row: a lease
 * on it expired and nobody reclaimed it, a lease on it follows redeliveries or failures, or the
 * cursor is paused. A healthy cursor with messages pending gets none (the Message page and the
 * Leases page still offer them for any message).
 */
const looksStuck = (r: CursorRow) =>
  r.paused ||
  r.leaseState === 'expired' ||
  (r.leaseId !== null && r.leaseEnd !== null && r.leaseEnd > r.committed && (r.redeliveries > 0 || r.failures > 0));

/** The way out when the cursor is stuck on its next message: to the group's dead letters, or skipped. */
function FirstMessageActions({ row: r, queue, onDone }: { row: CursorRow; queue: string; onDone: () => void }) {
  const next = r.committed + 1;
  const target = {
    partitionId: r.partitionId,
    partition: r.partition,
    queue,
    group: r.group!,
    offset: next,
    leaseId: r.leaseId && r.leaseEnd !== null && r.leaseEnd >= next ? r.leaseId : null,
    holder: r.holder,
  };
  const where = `offset ${next} of ${r.partition}/${r.group}`;
  return (
    <div className="mt-0.5 flex gap-1">
      <ReasonAction
        label={`Dead-letter ${next}`}
        accessibleName={`Move ${where} to the dead letters`}
        {...setAsideDialog('dead-letter', target)}
        onDone={onDone}
      />
      <ReasonAction label="Skip" accessibleName={`Skip ${where}`} {...setAsideDialog('skip', target)} onDone={onDone} />
    </div>
  );
}

const seconds = (s: number | null) => (s === null ? '—' : duration(s));

/** What bounds the queue's storage (sql/012), what it holds, and what the lifecycle job last removed. */
function StorageLine({ storage: s }: { storage: QueuePage['queue']['storage'] }) {
  return (
    <p className="text-sm text-muted" data-testid="storage">
      stores {count(s.stored)} messages ({bytes(s.bytes)}) · retention {seconds(s.retentionSeconds)} · after every group{' '}
      {seconds(s.completedRetentionSeconds ?? s.ttl)} · max wait {seconds(s.maxWaitTimeSeconds)} · max size{' '}
      {s.maxSize === null ? '—' : count(s.maxSize)}
      {s.lastRun
        ? ` · last cleanup ${utc(s.lastRun.at)}: ${count(s.lastRun.deleted)} deleted, ${count(s.lastRun.evicted)} evicted unconsumed`
        : ''}
    </p>
  );
}

/** Moving or dropping a whole group's cursors on this queue. */
function GroupActions({ queue, group }: { queue: string; group: string }) {
  return (
    <section
      className="flex flex-wrap items-center gap-2 rounded border border-zinc-200 px-3 py-2 text-sm dark:border-zinc-800"
      aria-label="Group actions"
    >
      <span>
        Group <strong className="font-mono">{group}</strong> on this queue:
      </span>
      <SeekAction queue={queue} group={group} />
      <ReasonAction
        label="Delete group here"
        title={`Delete ${group}'s cursors on ${queue}?`}
        confirmLabel="Delete"
        typeToConfirm={group}
        description={
          <>
            The cursors, attempt counts, dead letters and subscription of group <strong>{group}</strong> on queue{' '}
            <strong>{queue}</strong> are dropped. If its consumers pop again they start over as a new group.
          </>
        }
        success={`Deleted ${group}'s cursors on ${queue}`}
        run={(reason) => deleteGroupOnQueue(group, queue, reason)}
      />
    </section>
  );
}
