'use client';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import type { QueueDetail } from '@/lib/broker/queues';
import { count } from '@/lib/dashboard/format';
import { configureQueue, deleteQueue, readQueue } from './client/queues';
import { ReasonAction } from './reason-action';

/** What the queue page knows of the queue, for the dialogs' descriptions. */
interface QueueFacts {
  name: string;
  partitions: number;
  groups: string[];
  stored: number;
}

type Value = string | boolean;
interface Draft {
  namespace: string;
  task: string;
  /** numbers as typed, booleans as they are */
  options: Record<string, Value>;
}

/** The unit or meaning beside an option's name (docs/api.md, "Configure"). */
const HINTS: Record<string, string> = {
  leaseTime: 's',
  retryLimit: 'failures before the dead letters',
  retryDelay: 'ms',
  delayedProcessing: 's',
  windowBuffer: 's',
  minPopWaitTime: 'ms',
  maxSize: 'unconsumed messages, 0: no cap',
  ttl: 's',
  retentionSeconds: 's, 0: keep',
  completedRetentionSeconds: 's, 0: keep',
  maxWaitTimeSeconds: 's, 0: never evict',
  deadLetterAfterExpiries: '0: never',
};

const draftOf = (q: QueueDetail): Draft => ({
  namespace: q.namespace,
  task: q.task,
  options: Object.fromEntries(
    Object.entries(q.options).map(([k, v]) => [k, typeof v === 'boolean' ? v : String(v)] as [string, Value]),
  ),
});

/** What a confirm would change: `key: before → after`, namespace and task (quoted) included. */
function changes(before: Draft, after: Draft): string[] {
  const flat = (d: Draft): Record<string, string> => ({
    namespace: JSON.stringify(d.namespace),
    task: JSON.stringify(d.task),
    ...Object.fromEntries(Object.entries(d.options).map(([k, v]) => [k, String(v).trim()])),
  });
  const a = flat(before);
  const b = flat(after);
  return Object.keys(b)
    .filter((k) => a[k] !== b[k])
    .map((k) => `${k}: ${a[k]} → ${b[k]}`);
}

/** Configure (every option, edited) and delete the queue: admin, a reason, audited. */
export function QueueActions({ queue }: { queue: QueueFacts }) {
  const router = useRouter();
  const [loaded, setLoaded] = useState<Draft | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  return (
    <section className="flex flex-wrap items-center gap-2 text-sm" aria-label="Queue actions">
      <ReasonAction
        label="Configure"
        accessibleName={`Configure queue ${queue.name}`}
        title={`Configure ${queue.name}`}
        confirmLabel="Save options"
        onOpenChange={(open) => {
          if (open) {
            setLoaded(null);
            setDraft(null);
          }
        }}
        description={
          <ConfigureFields
            queue={queue.name}
            loaded={loaded}
            draft={draft}
            onLoad={(d) => {
              setLoaded(d);
              setDraft(d);
            }}
            onChange={setDraft}
          />
        }
        success={`Configured ${queue.name}`}
        run={async (reason) => {
          if (!loaded || !draft) throw new Error('The current options are not loaded yet.');
          if (changes(loaded, draft).length === 0)
            throw new Error('Nothing changed: edit an option first (a configure that changes nothing is not audited).');
          const options = Object.fromEntries(
            Object.entries(draft.options).map(([k, v]) => [
              k,
              typeof v === 'boolean' ? v : v.trim() === '' ? null : Number(v),
            ]),
          );
          return configureQueue({
            queue: queue.name,
            namespace: draft.namespace,
            task: draft.task,
            options,
            reason,
          });
        }}
      />
      <ReasonAction
        label="Delete queue"
        accessibleName={`Delete queue ${queue.name}`}
        title={`Delete queue ${queue.name}?`}
        confirmLabel="Delete queue"
        typeToConfirm={queue.name}
        description={
          <p>
            Queue <strong className="font-mono">{queue.name}</strong> goes with everything of it:{' '}
            {count(queue.partitions)} partitions, {count(queue.stored)} stored messages, the cursors, subscriptions and
            dead letters of {queue.groups.length ? `groups ${queue.groups.join(', ')}` : 'no group yet'}, and every live
            lease on it. A push or a pop afterwards creates it again, empty, with default options. The audit log keeps
            what went.
          </p>
        }
        success={`Deleted queue ${queue.name}`}
        onDone={() => router.refresh()}
        run={(reason) => deleteQueue(queue.name, reason)}
      />
    </section>
  );
}

/** The queue's current options, read when the dialog opens, as fields; and what a confirm would change. */
function ConfigureFields({
  queue,
  loaded,
  draft,
  onLoad,
  onChange,
}: {
  queue: string;
  loaded: Draft | null;
  draft: Draft | null;
  onLoad: (d: Draft) => void;
  onChange: (d: Draft) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read once, when the dialog opens
  useEffect(() => {
    const abort = new AbortController();
    readQueue(queue, abort.signal)
      .then((q) => onLoad(draftOf(q)))
      .catch((err) => abort.signal.aborted || setError((err as Error).message));
    return () => abort.abort();
  }, [queue]);
  if (error)
    return (
      <p role="alert" className="text-red-700 dark:text-red-400">
        Could not read the current options: {error}
      </p>
    );
  if (!loaded || !draft) return <p>Reading the current options…</p>;
  const diff = changes(loaded, draft);
  const input = 'w-full rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-950';
  return (
    <div className="space-y-2">
      <p>
        Every option is set as shown (a configure is a full set); the queue&apos;s consumers see the change at their
        next pop.
      </p>
      <div className="grid grid-cols-2 gap-x-3 gap-y-1.5" data-testid="configure-options">
        {(['namespace', 'task'] as const).map((k) => (
          <label key={k} className="flex flex-col text-xs">
            <span className="font-mono">{k}</span>
            <input
              value={draft[k]}
              onChange={(e) => onChange({ ...draft, [k]: e.target.value })}
              className={`${input} font-mono`}
            />
          </label>
        ))}
        {Object.entries(draft.options).map(([k, v]) =>
          typeof v === 'boolean' ? (
            <label key={k} className="flex items-center gap-1.5 self-end text-xs">
              <input
                type="checkbox"
                checked={v}
                onChange={(e) => onChange({ ...draft, options: { ...draft.options, [k]: e.target.checked } })}
              />
              <span className="font-mono">{k}</span>
            </label>
          ) : (
            <label key={k} className="flex flex-col text-xs">
              <span>
                <span className="font-mono">{k}</span>
                {HINTS[k] && <span className="text-muted"> ({HINTS[k]})</span>}
              </span>
              <input
                type="number"
                step="1"
                value={v}
                onChange={(e) => onChange({ ...draft, options: { ...draft.options, [k]: e.target.value } })}
                className={`${input} tabular-nums`}
              />
            </label>
          ),
        )}
      </div>
      <div data-testid="configure-changes">
        {diff.length ? (
          <>
            <p className="font-medium">Changes:</p>
            <ul className="list-inside list-disc font-mono text-xs">
              {diff.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          </>
        ) : (
          <p className="text-muted">No change yet.</p>
        )}
      </div>
    </div>
  );
}
