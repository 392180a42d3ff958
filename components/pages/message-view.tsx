'use client';
import Link from 'next/link';
import { count, shortId, utc, utcMillis } from '@/lib/dashboard/format';
import { deadLettersHref, queueHref } from '@/lib/dashboard/links';
import { Countdown } from '../countdown';
import { deadLetterDialog } from '../dead-letter-dialog';
import { DeleteMessage } from '../delete-message';
import { ListTable } from '../list-table';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { setAsideDialog, type SetAsideTarget } from '../set-aside-dialog';
import { TraceTimeline } from './trace-timeline';
import { type MessageDetail, type MessageTraces, messagePath } from '../client/messages';

const STATE_STYLE: Record<string, string> = {
  done: 'text-emerald-700 dark:text-emerald-400',
  leased: 'text-sky-700 dark:text-sky-400',
  pending: 'text-zinc-600 dark:text-zinc-300',
  dead_letter: 'font-medium text-red-600 dark:text-red-400',
};

export function MessageView({ initial, traces }: { initial: MessageDetail; traces: MessageTraces }) {
  const path = messagePath(initial.partitionId, initial.transactionId);
  const { data = initial } = useLiveQuery<MessageDetail>(
    ['message', initial.partitionId, initial.transactionId],
    path,
    initial,
  );
  const facts: [string, React.ReactNode][] = [
    [
      'Queue',
      <Link
        key="q"
        href={queueHref(data.queue, { partition: data.partition })}
        className="font-mono text-sky-700 hover:underline dark:text-sky-400"
      >
        {data.queue}
      </Link>,
    ],
    [
      'Partition',
      <span key="p" className="font-mono">
        {data.partition} <span className="text-muted">({shortId(data.partitionId)})</span>
      </span>,
    ],
    ['Offset', count(data.offset)],
    ['Segment time', utc(data.createdAt)],
    [
      'Message id',
      <span key="id" className="font-mono">
        {data.id}
      </span>,
    ],
    ['Trace id', data.traceId ?? '—'],
    ['Producer', data.producerSub ?? '—'],
  ];
  return (
    <div className="space-y-5">
      <div>
        <p className="text-sm text-muted">Message</p>
        <h1 className="wrap-anywhere font-mono text-xl font-semibold">{data.transactionId}</h1>
        <div className="mt-2">
          <DeleteMessage
            queue={data.queue}
            partition={data.partition}
            partitionId={data.partitionId}
            transactionId={data.transactionId}
          />
        </div>
      </div>
      <dl className="grid grid-cols-[7rem_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm md:grid-cols-[10rem_minmax(0,1fr)]">
        {facts.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-muted">{k}</dt>
            <dd className="break-words">{v}</dd>
          </div>
        ))}
      </dl>
      <section>
        <h2 className="mb-2 font-semibold">Per consumer group</h2>
        <ListTable
          empty={
            data.consumerGroups.length === 0 && (
              <p className="py-3 text-sm text-muted">No group has reached this partition yet.</p>
            )
          }
          head={
            <>
              <th className="py-2 pr-3">Group</th>
              <th className="pr-3">State</th>
              <th className="cell-optional pr-3 text-right">Deliveries</th>
              <th className="cell-optional pr-3 text-right">Failures</th>
              <th className="pr-3">Last error</th>
              <th className="pr-3">Lease</th>
            </>
          }
        >
          {data.consumerGroups.map((g) => (
            <tr key={g.name} className="border-b border-zinc-100 dark:border-zinc-900" data-testid={`group-${g.name}`}>
              <td className="py-2 pr-3 font-mono wrap-anywhere">{g.name}</td>
              <td className={`pr-3 ${STATE_STYLE[g.state] ?? ''}`}>
                {g.state === 'dead_letter' ? (
                  <>
                    <Link
                      href={deadLettersHref({ queue: data.queue, partition: data.partition, group: g.name })}
                      className="hover:underline"
                    >
                      dead letter
                    </Link>{' '}
                    <DeadLetterActions message={data} group={g.name} />
                  </>
                ) : (
                  <>
                    {g.state.replace('_', ' ')}
                    {g.lease?.expired ? <span className="text-red-700 dark:text-red-400"> (lease expired)</span> : null}{' '}
                    {g.state !== 'done' && <SetAsideActions message={data} group={g.name} lease={g.lease} />}
                  </>
                )}
              </td>
              <td className="cell-optional pr-3 text-right tabular-nums">{g.deliveries}</td>
              <td className="cell-optional pr-3 text-right tabular-nums">{g.failures}</td>
              <td className="pr-3 font-mono text-xs wrap-anywhere">{g.lastError ?? '—'}</td>
              <td className="pr-3">
                {g.leaseId ? (
                  <>
                    <span className="font-mono text-xs">{shortId(g.leaseId)}</span>{' '}
                    <Countdown expiresAt={g.leaseExpiresAt} />
                  </>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      </section>
      <Deliveries deliveries={data.deliveries} />
      <AttemptErrors groups={data.consumerGroups} queue={data.queue} />
      <TraceTimeline partitionId={data.partitionId} transactionId={data.transactionId} initial={traces} />
      <section>
        <h2 className="mb-2 font-semibold">Payload</h2>
        <pre
          className="max-h-[32rem] overflow-auto rounded bg-zinc-100 p-3 text-xs dark:bg-zinc-900"
          data-testid="payload"
        >
          {JSON.stringify(data.data, null, 2)}
        </pre>
      </section>
    </div>
  );
}

const ENDED_STYLE: Record<string, string> = {
  acked: 'text-emerald-700 dark:text-emerald-400',
  'auto-acked': 'text-emerald-700 dark:text-emerald-400',
  failed: 'text-amber-700 dark:text-amber-400',
  expired: 'text-red-700 dark:text-red-400',
  'expired, not reclaimed': 'font-medium text-red-700 dark:text-red-400',
  live: 'text-sky-700 dark:text-sky-400',
};

/** Every delivery of the message (a span holding it, to a group), newest first: who got it, under which lease, how it ended. */
function Deliveries({ deliveries }: { deliveries: MessageDetail['deliveries'] }) {
  if (deliveries.length === 0) return null;
  return (
    <section>
      <h2 className="mb-2 font-semibold">
        Deliveries{' '}
        <span className="text-sm font-normal text-muted" data-testid="delivery-count">
          ({count(deliveries.length)})
        </span>
      </h2>
      <div className="overflow-x-auto" data-testid="deliveries">
        <ListTable
          head={
            <>
              <th className="py-2 pr-3">Claimed</th>
              <th className="pr-3">Group</th>
              <th className="pr-3">Holder</th>
              <th className="cell-optional pr-3">Lease</th>
              <th className="cell-optional pr-3">Span</th>
              <th className="pr-3">Ended</th>
            </>
          }
        >
          {deliveries.map((d, i) => (
            <tr
              key={`${d.claimedAt}/${d.leaseId}/${i}`}
              className="border-b border-zinc-100 align-top dark:border-zinc-900"
              data-testid="delivery"
            >
              <td className="whitespace-nowrap py-2 pr-3 text-xs">{utcMillis(d.claimedAt)}</td>
              <td className="pr-3 font-mono">{d.group}</td>
              <td className="pr-3 font-mono text-xs wrap-anywhere">{d.holder ?? '—'}</td>
              <td className="cell-optional pr-3 font-mono text-xs" title={d.leaseId ?? undefined}>
                {d.leaseId ? shortId(d.leaseId) : '—'}
                {d.extensions ? ` · extended ×${d.extensions}` : ''}
              </td>
              <td className="cell-optional pr-3 tabular-nums">
                {d.from}–{d.to}
              </td>
              <td className={`pr-3 ${ENDED_STYLE[d.ended] ?? ''}`} data-testid="delivery-ended">
                {d.ended}
                {d.endedAt ? <span className="text-xs text-muted"> {utcMillis(d.endedAt)}</span> : null}
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
      <p className="mt-1 text-xs text-muted">Kept for DELIVERY_RETENTION_HOURS (24 by default).</p>
    </section>
  );
}

/** The way out for a poison message in one group: to its dead letters, or skipped; either way the group's next pop delivers the next one. */
function SetAsideActions({
  message: m,
  group,
  lease,
}: {
  message: MessageDetail;
  group: string;
  lease: MessageDetail['consumerGroups'][number]['lease'];
}) {
  const target: SetAsideTarget = {
    partitionId: m.partitionId,
    partition: m.partition,
    queue: m.queue,
    group,
    transactionId: m.transactionId,
    offset: m.offset,
    leaseId: lease?.leaseId ?? null,
    holder: lease?.holder,
  };
  const where = `offset ${m.offset} of ${m.partition}/${group}`;
  return (
    <span className="ml-1 inline-flex gap-1 font-normal">
      <ReasonAction
        label="Dead-letter"
        accessibleName={`Move ${where} to the dead letters`}
        {...setAsideDialog('dead-letter', target)}
      />
      <ReasonAction label="Skip" accessibleName={`Skip ${where}`} {...setAsideDialog('skip', target)} />
    </span>
  );
}

/** Every failed attempt's error, per group, oldest first (the group table shows only the last). */
function AttemptErrors({ groups, queue }: { groups: MessageDetail['consumerGroups']; queue: string }) {
  const rows = groups.flatMap((g) => g.attempts.map((a) => ({ group: g.name, ...a })));
  if (rows.length === 0) return null;
  return (
    <section>
      <h2 className="mb-2 font-semibold">Failed attempts</h2>
      <div className="overflow-x-auto" data-testid="attempt-errors">
        <ListTable
          head={
            <>
              <th className="py-2 pr-3">Group</th>
              <th className="pr-3 text-right">Attempt</th>
              <th className="pr-3">Error</th>
              <th className="pr-3">At</th>
            </>
          }
        >
          {rows.map((a) => (
            <tr key={`${a.group}/${a.attempt}`} className="border-b border-zinc-100 align-top dark:border-zinc-900">
              <td className="py-2 pr-3 font-mono">{a.group}</td>
              <td className="pr-3 text-right tabular-nums">{a.attempt}</td>
              <td className="wrap-anywhere pr-3 font-mono text-xs text-red-700 dark:text-red-300">{a.error ?? '—'}</td>
              <td className="whitespace-nowrap pr-3 text-xs">{utcMillis(a.at)}</td>
            </tr>
          ))}
        </ListTable>
      </div>
      <p className="mt-1 text-xs text-muted">
        The last 100 failures per group are kept.{' '}
        <Link href={deadLettersHref({ queue })} className="text-sky-700 hover:underline dark:text-sky-400">
          Dead letters of {queue}
        </Link>
      </p>
    </section>
  );
}

/** Requeue or discard this message's dead letter for one group, as the Dead letters page does for a row. */
function DeadLetterActions({ message: m, group }: { message: MessageDetail; group: string }) {
  const target = { items: [{ partitionId: m.partitionId, consumerGroup: group, offset: m.offset }] };
  const what = `the dead letter ${m.transactionId} of ${m.partition}/${group}`;
  const where = `offset ${m.offset} of ${m.partition}/${group} in ${m.queue}`;
  return (
    <span className="ml-1 inline-flex gap-1 font-normal">
      <ReasonAction
        label="Requeue"
        accessibleName={`Requeue dead letter ${where}`}
        {...deadLetterDialog('requeue', target, what)}
      />
      <ReasonAction
        label="Discard"
        accessibleName={`Discard dead letter ${where}`}
        {...deadLetterDialog('discard', target, what)}
      />
    </span>
  );
}
