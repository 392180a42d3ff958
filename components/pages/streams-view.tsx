'use client';
import Link from 'next/link';
import type { StreamingQuery, StreamingQueryList } from '@/lib/dashboard/streams';
import { STREAMS_PAGE_SIZE } from '@/lib/dashboard/streams-paging';
import { bytes, count, shortId, utc } from '@/lib/dashboard/format';
import { auditHref, queueHref } from '@/lib/dashboard/links';
import { ListTable, pageOf, pageRange } from '../list-table';
import { PageButtons } from '../page-buttons';
import { PastLastPage } from '../past-last-page';
import { useLiveQuery } from '../providers';
import { ReasonAction } from '../reason-action';
import { resetStreamQuery, streamsPath } from '../client/streams';

const LINK = 'text-sky-700 hover:underline dark:text-sky-400';

/** A page of the streaming queries by name (STREAMS_PAGE_SIZE a page, the listing's default). */
export function StreamsView({ initial, page: asked }: { initial: StreamingQueryList; page?: string }) {
  const { data = initial, error } = useLiveQuery<StreamingQueryList>(['streams', asked], streamsPath(asked), initial);
  const page = pageOf(asked);
  const range = pageRange(page, STREAMS_PAGE_SIZE, data.total, data.queries.length);
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div>
          <h1 className="text-2xl font-semibold">Streaming queries</h1>
          <p className="text-sm text-muted">
            Queries of the streams SDKs (<span className="font-mono">/streams/v1</span>): what each reads and writes,
            how far its consumer group is behind, the state it keeps per source partition, and its last cycle. A reset
            drops every state row of the query; its cursors stay.
          </p>
        </div>
        {data.total > STREAMS_PAGE_SIZE && (
          <div className="flex items-center gap-2 text-sm">
            <span className="text-muted" data-testid="stream-range">
              {count(range.first)}–{count(range.last)} of {count(data.total)}
            </span>
            <PageButtons page={page} hasNext={range.hasNext} />
          </div>
        )}
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Refresh failed: {(error as Error).message}
        </p>
      )}
      {data.total === 0 && <p className="py-6 text-center text-sm text-muted">No streaming query is registered.</p>}
      {range.pastLast && <PastLastPage page={page} total={data.total} pageSize={STREAMS_PAGE_SIZE} />}
      {data.queries.map((q) => (
        <QueryCard key={q.queryId} query={q} />
      ))}
    </div>
  );
}

function QueryCard({ query: q }: { query: StreamingQuery }) {
  return (
    <section
      className="rounded border border-zinc-200 p-3 dark:border-zinc-800"
      data-testid={`stream-${q.name}`}
      aria-label={`Streaming query ${q.name}`}
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 className="font-mono text-lg wrap-anywhere">{q.name}</h2>
        <ReasonAction
          label="Reset state"
          accessibleName={`Reset state of ${q.name}`}
          title={`Reset the state of ${q.name}?`}
          description={
            <>
              Every state row of <strong>{q.name}</strong> ({count(q.stateKeys)} keys on {count(q.statePartitions)}{' '}
              partitions) is deleted. Its consumer group <strong>{q.consumerGroup}</strong> keeps its position: windows
              restart empty from there.
            </>
          }
          confirmLabel="Reset state"
          success={`State of ${q.name} reset`}
          run={(reason) => resetStreamQuery(q.queryId, reason)}
        />
      </div>
      <dl className="mt-2 grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-4">
        <dt className="text-muted">Source queue</dt>
        <dd data-testid="source">
          <Link href={queueHref(q.sourceQueue, { group: q.consumerGroup })} className={LINK}>
            {q.sourceQueue}
          </Link>
        </dd>
        <dt className="text-muted">Sink queue</dt>
        <dd data-testid="sink">
          {q.sinkQueue ? (
            <Link href={queueHref(q.sinkQueue)} className={LINK}>
              {q.sinkQueue}
            </Link>
          ) : (
            <span className="text-muted">none</span>
          )}
        </dd>
        <dt className="text-muted">Consumer group</dt>
        <dd className="font-mono text-xs wrap-anywhere" data-testid="group">
          {q.consumerGroup}
        </dd>
        <dt className="text-muted" title="Messages of the source queue the group has not consumed">
          Lag
        </dt>
        <dd className="tabular-nums" data-testid="lag">
          {q.lag === null ? '—' : count(q.lag)}
        </dd>
        <dt className="text-muted">State</dt>
        <dd className="tabular-nums" data-testid="state">
          {count(q.stateKeys)} keys, {bytes(q.stateBytes)}
        </dd>
        <dt className="text-muted">Cycles</dt>
        <dd className="tabular-nums" data-testid="cycles">
          {count(q.cycles)} committed, {count(q.refused)} refused
        </dd>
        <dt className="text-muted">Last cycle</dt>
        <dd data-testid="last-cycle">{utc(q.lastCycleAt)}</dd>
        <dt className="text-muted">Config hash</dt>
        <dd className="font-mono text-xs" title={q.configHash}>
          {shortId(q.configHash)}
        </dd>
        <dt className="text-muted">Resets</dt>
        <dd>
          <Link href={auditHref({ target: q.name })} className={LINK}>
            audit log
          </Link>
        </dd>
      </dl>
      <div className="mt-3 overflow-x-auto">
        <ListTable
          head={
            <>
              <th className="py-2 pr-3">Partition</th>
              <th className="pr-3 text-right">Keys</th>
              <th className="pr-3 text-right">Bytes</th>
              <th className="pr-3 text-right">Cycles</th>
              <th className="pr-3 text-right">Refused</th>
              <th className="pr-3">Last cycle</th>
              <th className="cell-optional pr-3">Last refusal</th>
            </>
          }
        >
          {q.shards.map((s) => (
            <tr
              key={s.partitionId}
              className="border-b border-zinc-100 dark:border-zinc-900"
              data-testid={`shard-${s.partitionId}`}
            >
              <td className="py-1 pr-3 font-mono text-xs" title={s.partitionId}>
                {s.partition ?? <span className="text-muted">unknown partition {shortId(s.partitionId)}</span>}
              </td>
              <td className="pr-3 text-right tabular-nums" data-testid="keys">
                {count(s.stateKeys)}
              </td>
              <td className="pr-3 text-right tabular-nums" data-testid="bytes">
                {count(s.stateBytes)}
              </td>
              <td className="pr-3 text-right tabular-nums" data-testid="shard-cycles">
                {count(s.cycles)}
              </td>
              <td className="pr-3 text-right tabular-nums" data-testid="shard-refused">
                {count(s.refused)}
              </td>
              <td className="pr-3 text-xs">{utc(s.lastCycleAt)}</td>
              <td className="cell-optional pr-3 text-xs">
                {s.lastRefusal ? `${utc(s.lastRefusedAt)}: ${s.lastRefusal}` : '—'}
              </td>
            </tr>
          ))}
        </ListTable>
        {q.shards.length === 0 && <p className="py-3 text-center text-sm text-muted">No cycle yet.</p>}
        {q.shardCount > q.shards.length && (
          <p className="py-1 text-xs text-muted" data-testid="shards-more">
            The {count(q.shards.length)} partitions with the most state of {count(q.shardCount)}.
          </p>
        )}
      </div>
    </section>
  );
}
