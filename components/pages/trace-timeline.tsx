'use client';
import { utcMillis } from '@/lib/dashboard/format';
import { useLiveQuery } from '../providers';
import { type MessageTraces, tracesPath } from '../client/messages';

const EVENT_STYLE: Record<string, string> = {
  error: 'bg-red-600',
  warning: 'bg-amber-500',
  processing: 'bg-sky-600',
  step: 'bg-sky-600',
};

/** What consumers recorded with msg.trace() for one message, oldest first, as a vertical timeline. */
export function TraceTimeline({
  partitionId,
  transactionId,
  initial,
}: {
  partitionId: string;
  transactionId: string;
  initial: MessageTraces;
}) {
  const path = tracesPath(partitionId, transactionId);
  const { data = initial } = useLiveQuery<MessageTraces>(['traces', partitionId, transactionId], path, initial);
  return (
    <section>
      <h2 className="mb-2 font-semibold">
        Traces <span className="text-sm font-normal text-muted">({data.count})</span>
      </h2>
      {data.traces.length === 0 ? (
        <p className="py-3 text-sm text-muted">No consumer has recorded a trace for this message.</p>
      ) : (
        <ol className="relative ml-2 border-l border-zinc-300 dark:border-zinc-700" data-testid="trace-timeline">
          {data.traces.map((t) => (
            <li key={t.id} className="mb-4 ml-4" data-testid="trace">
              <span
                className={`absolute -left-1.5 mt-1.5 h-3 w-3 rounded-full ${EVENT_STYLE[t.eventType] ?? 'bg-zinc-400'}`}
              />
              <div className="flex flex-wrap items-baseline gap-x-3 text-sm">
                <time className="tabular-nums text-muted" dateTime={t.createdAt}>
                  {utcMillis(t.createdAt)}
                </time>
                <span className="font-medium" data-testid="trace-event">
                  {t.eventType}
                </span>
                <span className="font-mono text-xs" data-testid="trace-group">
                  {t.consumerGroup}
                </span>
                {t.traceNames.map((n) => (
                  <span key={n} className="rounded bg-zinc-100 px-1.5 font-mono text-xs dark:bg-zinc-800">
                    {n}
                  </span>
                ))}
              </div>
              <pre
                className="mt-1 max-h-48 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900"
                data-testid="trace-data"
              >
                {JSON.stringify(t.data, null, 2)}
              </pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
