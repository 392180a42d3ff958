'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { leasesHref } from '@/lib/dashboard/links';
import { Countdown } from '../countdown';
import { useDenied } from '../session';
import { useUrlState } from '../url-state';
import { extendLease, releaseLease } from '../client/leases';
import { ackBatch, type PopTarget, popPreviewPath, popRoutePath, popTarget } from '../client/pop';
import { searchQueues } from '../client/search';

type Route = 'queue' | 'partition' | 'discovery';

const FIELDS = [
  'route',
  'queue',
  'partition',
  'namespace',
  'task',
  'batch',
  'partitions',
  'autoAck',
  'wait',
  'timeout',
  'leaseSeconds',
  'consumerGroup',
  'subscriptionMode',
  'subscriptionFrom',
] as const;
type Form = Record<(typeof FIELDS)[number], string>;

const DEFAULTS: Form = {
  route: 'queue',
  queue: '',
  partition: '',
  namespace: '',
  task: '',
  batch: '10',
  partitions: '1',
  autoAck: 'false',
  wait: 'false',
  timeout: '5000',
  leaseSeconds: '',
  consumerGroup: '',
  subscriptionMode: '',
  subscriptionFrom: '',
};

const QUERY_PARAMS = [
  'batch',
  'partitions',
  'autoAck',
  'wait',
  'timeout',
  'leaseSeconds',
  'consumerGroup',
  'subscriptionMode',
  'subscriptionFrom',
] as const;

export function popUrl(f: Form): string {
  const qs = new URLSearchParams();
  for (const k of QUERY_PARAMS) if (f[k] !== '') qs.set(k, f[k]);
  if (f.route === 'discovery') {
    if (f.namespace) qs.set('namespace', f.namespace);
    if (f.task) qs.set('task', f.task);
  }
  if (f.route === 'partition') qs.delete('partitions');
  const path = popRoutePath(f.route, f.queue, f.partition);
  return `${path}${qs.size ? `?${qs}` : ''}`;
}

/** The dry run of the same pop: GET /api/dashboard/pop-preview with the pop's parameters and its queue and partition. */
function dryRunUrl(f: Form, popPath: string): string {
  const qs = new URLSearchParams(popPath.includes('?') ? popPath.slice(popPath.indexOf('?') + 1) : '');
  if (f.route !== 'discovery') qs.set('queue', f.queue);
  if (f.route === 'partition') qs.set('partition', f.partition);
  return popPreviewPath(qs);
}

interface Reply {
  kind: 'pop' | 'dry run';
  /** a dry run's 204: why, beyond idle (a misspelt queue, leases of other holders) */
  why?: {
    text: string;
    group?: string;
    held?: number;
    leases?: { partition: string; holder: string | null; expiresAt: string; leaseId: string }[];
  } | null;
  status: number;
  headers: [string, string][];
  body: any;
  text: string;
  ms: number;
}

export function ConsoleView({ initial }: { initial: Partial<Form> }) {
  const { set } = useUrlState();
  const [form, setForm] = useState<Form>({ ...DEFAULTS, ...initial });
  const [reply, setReply] = useState<Reply | null>(null);
  const [busy, setBusy] = useState(false);
  const [action, setAction] = useState<{ label: string; result: unknown } | null>(null);
  const [failError, setFailError] = useState('processing failed');
  const [extendBy, setExtendBy] = useState('60');
  const [releaseReason, setReleaseReason] = useState('');
  const url = popUrl(form);
  const previewUrl = dryRunUrl(form, url);
  const writeDenied = useDenied('read-write');
  const adminDenied = useDenied('admin');
  // Known only in the browser; the server's render and the first client render leave it empty.
  const [origin, setOrigin] = useState('');
  useEffect(() => setOrigin(window.location.origin), []);
  const [creates, setCreates] = useState<PopTarget | null>(null);
  const suggestions = useQuery({
    queryKey: ['queue-suggestions', form.queue],
    queryFn: ({ signal }) => searchQueues(form.queue, signal),
    enabled: form.route !== 'discovery',
    staleTime: 10_000,
  });
  const field = (k: keyof Form) => ({
    value: form[k],
    onChange: (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value }),
  });

  /** A pop that would create the queue or the group waits for "create and pop"; a dry run creates nothing and only warns. */
  async function attempt(kind: Reply['kind']) {
    let target: PopTarget | null = null;
    if (form.route !== 'discovery') {
      const t = await popTarget(form.queue, form.consumerGroup);
      if (!t.queueExists || (form.consumerGroup && !t.groupExists)) target = t;
    }
    setCreates(target);
    if (kind === 'pop' && target) {
      setReply(null);
      return;
    }
    await run(kind);
  }

  async function run(kind: Reply['kind']) {
    setBusy(true);
    setAction(null);
    set(Object.fromEntries(FIELDS.map((k) => [k, form[k] === DEFAULTS[k] ? null : form[k]])));
    const started = performance.now();
    try {
      if (kind === 'pop') {
        const res = await fetch(url, {
          headers: { 'content-type': 'application/json', 'x-queen-consumer': 'dashboard console' },
        });
        const text = await res.text();
        setReply({
          kind,
          status: res.status,
          headers: [...res.headers.entries()],
          body: text ? JSON.parse(text) : null,
          text,
          ms: performance.now() - started,
        });
      } else {
        const preview = await fetch(previewUrl);
        const data = await preview.json();
        const status = preview.ok ? data.status : preview.status;
        const body = preview.ok ? data.body : data;
        setReply({
          kind,
          status,
          headers: data.empty ? [['x-queen-empty', data.empty]] : [],
          body,
          text: body ? JSON.stringify(body) : '',
          ms: performance.now() - started,
          why: data.why ?? null,
        });
      }
    } finally {
      setBusy(false);
    }
  }

  const leased = reply?.kind === 'pop' && reply.status === 200 && reply.body?.leaseId ? reply.body : null;
  const perform = async (label: string, call: () => Promise<unknown>) => {
    try {
      setAction({ label, result: await call() });
    } catch (err) {
      setAction({ label, result: { error: (err as Error).message } });
    }
  };
  const ackAll = (status: 'completed' | 'failed') =>
    perform(status === 'completed' ? 'Ack all' : 'Fail all', () =>
      ackBatch({
        consumerGroup: leased.consumerGroup,
        acknowledgments: leased.messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status,
          error: status === 'failed' ? failError : null,
        })),
      }),
    );

  const input = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Try pop</h1>
        <p
          className="mt-1 rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
          role="note"
        >
          A real pop leases real messages: the group&apos;s consumers will not get them until you ack them or the lease
          expires, and with <code>autoAck</code> they are gone for that group. Use <strong>Dry run</strong> to see what
          a pop would claim without claiming it.
        </p>
      </div>
      <form
        className="grid grid-cols-2 gap-3 text-sm md:grid-cols-4"
        onSubmit={(e) => {
          e.preventDefault();
          void attempt('pop');
        }}
      >
        <label className="flex flex-col">
          <span className="text-xs text-muted">Route</span>
          <select {...field('route')} className={input} aria-label="Route">
            <option value="queue">/pop/queue/:queue</option>
            <option value="partition">/pop/queue/:queue/partition/:partition</option>
            <option value="discovery">/pop (namespace / task)</option>
          </select>
        </label>
        {form.route !== 'discovery' && (
          <label className="flex flex-col">
            <span className="text-xs text-muted">Queue</span>
            <input
              {...field('queue')}
              className={input}
              aria-label="Queue"
              required
              list="queue-suggestions"
              autoComplete="off"
            />
            <datalist id="queue-suggestions">
              {suggestions.data?.matches.map((m) => (
                <option key={m.href} value={m.label.replace(/^queue /, '')} />
              ))}
            </datalist>
          </label>
        )}
        {form.route === 'partition' && (
          <label className="flex flex-col">
            <span className="text-xs text-muted">Partition</span>
            <input {...field('partition')} className={input} aria-label="Partition" required />
          </label>
        )}
        {form.route === 'discovery' && (
          <>
            <label className="flex flex-col">
              <span className="text-xs text-muted">Namespace</span>
              <input {...field('namespace')} className={input} aria-label="Namespace" />
            </label>
            <label className="flex flex-col">
              <span className="text-xs text-muted">Task</span>
              <input {...field('task')} className={input} aria-label="Task" />
            </label>
          </>
        )}
        <label className="flex flex-col">
          <span className="text-xs text-muted">consumerGroup (empty: queue mode)</span>
          <input {...field('consumerGroup')} className={input} aria-label="consumerGroup" />
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">batch</span>
          <input {...field('batch')} type="number" className={input} aria-label="batch" />
        </label>
        {form.route !== 'partition' && (
          <label className="flex flex-col">
            <span className="text-xs text-muted">partitions (≤ 0: no cap)</span>
            <input {...field('partitions')} type="number" className={input} aria-label="partitions" />
          </label>
        )}
        <label className="flex flex-col">
          <span className="text-xs text-muted">leaseSeconds (empty: queue&apos;s)</span>
          <input {...field('leaseSeconds')} type="number" className={input} aria-label="leaseSeconds" />
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">autoAck</span>
          <select {...field('autoAck')} className={input} aria-label="autoAck">
            <option value="false">false (lease)</option>
            <option value="true">true (at-most-once)</option>
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">wait</span>
          <select {...field('wait')} className={input} aria-label="wait">
            <option value="false">false</option>
            <option value="true">true (long poll)</option>
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">timeout (ms)</span>
          <input {...field('timeout')} type="number" className={input} aria-label="timeout" />
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">subscriptionMode</span>
          <select {...field('subscriptionMode')} className={input} aria-label="subscriptionMode">
            <option value="">(default: all)</option>
            <option value="all">all</option>
            <option value="new">new</option>
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-muted">subscriptionFrom (now or ISO)</span>
          <input {...field('subscriptionFrom')} className={input} aria-label="subscriptionFrom" />
        </label>
        <div className="col-span-2 flex items-end gap-2 md:col-span-4">
          <button
            type="submit"
            disabled={busy || Boolean(writeDenied)}
            title={writeDenied}
            className="rounded bg-red-600 px-3 py-1.5 font-medium text-white disabled:opacity-50"
          >
            Pop (leases real messages)
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => void attempt('dry run')}
            className="rounded border border-zinc-300 px-3 py-1.5 dark:border-zinc-700"
          >
            Dry run
          </button>
          {busy && <span className="text-muted">waiting for the broker…</span>}
        </div>
      </form>
      {creates && (
        <section
          role="alert"
          aria-label="What the pop creates"
          className="space-y-2 rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
        >
          {!creates.queueExists && (
            <p data-testid="creates-queue">
              Queue <strong className="font-mono">{creates.queue}</strong> does not exist. A pop creates it (implicitly:
              lease 60 s, default options), and it stays until deleted.
            </p>
          )}
          {form.consumerGroup && !creates.groupExists && (
            <p data-testid="creates-group">
              Group <strong className="font-mono">{creates.consumerGroup}</strong> has never read {creates.queue}: a pop
              creates its cursors on every partition of the queue, and they persist after this pop (delete the group on
              the queue page to drop them).
            </p>
          )}
          <div className="flex gap-2">
            <button
              type="button"
              disabled={busy || Boolean(writeDenied)}
              onClick={() => {
                setCreates(null);
                void run('pop');
              }}
              className="rounded bg-red-600 px-3 py-1 font-medium text-white disabled:opacity-50"
            >
              {creates.queueExists ? 'Create group and pop' : 'Create queue and pop'}
            </button>
            <button
              type="button"
              onClick={() => setCreates(null)}
              className="rounded border border-amber-400 px-3 py-1 dark:border-amber-700"
            >
              Cancel
            </button>
          </div>
        </section>
      )}
      <section>
        <h2 className="text-sm font-semibold">Equivalent curl</h2>
        <pre className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="curl">
          curl -sS -i &apos;{origin}
          {url}&apos;
        </pre>
        <p className="mt-1 text-xs text-muted">The dry run (claims nothing; answers {'{status, empty, body, why}'}):</p>
        <pre className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="curl-dry-run">
          curl -sS &apos;{origin}
          {previewUrl}&apos;
        </pre>
      </section>
      {reply && (
        <section className="space-y-2" aria-label="Reply">
          <h2 className="text-sm font-semibold">
            {reply.kind === 'dry run' ? 'Dry run (nothing was claimed): ' : 'Reply: '}
            <span
              data-testid="reply-status"
              className={
                reply.status === 200
                  ? 'text-emerald-700 dark:text-emerald-400'
                  : reply.status === 204
                    ? 'text-muted'
                    : 'text-red-600'
              }
            >
              HTTP {reply.status}
            </span>
            <span className="font-normal text-muted">
              {' '}
              in {Math.round(reply.ms)} ms{reply.body?.messages ? `, ${reply.body.messages.length} messages` : ''}
            </span>
          </h2>
          {reply.kind === 'dry run' &&
            reply.status === 204 &&
            reply.why &&
            (reply.why.leases?.length ? (
              <HeldBy why={reply.why} />
            ) : (
              <p className="text-sm font-medium text-amber-800 dark:text-amber-300" data-testid="dry-run-why">
                {reply.why.text}
              </p>
            ))}
          {reply.kind === 'dry run' && reply.status === 200 && (
            <p className="text-sm text-zinc-600 dark:text-zinc-300" data-testid="dry-run-lease">
              No lease: a dry run holds none, so its <code>leaseId</code> is null.
            </p>
          )}
          {reply.headers.length > 0 && (
            <pre
              className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900"
              data-testid="reply-headers"
            >
              {reply.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}
            </pre>
          )}
          <pre
            className="max-h-96 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900"
            data-testid="reply-body"
          >
            {reply.text ? JSON.stringify(reply.body, null, 2) : '(no body)'}
          </pre>
        </section>
      )}
      {leased && (
        <section
          className="space-y-2 rounded border border-zinc-200 p-3 text-sm dark:border-zinc-800"
          aria-label="Lease actions"
        >
          <h2 className="font-semibold">
            Lease{' '}
            <Link
              href={leasesHref({ lease: leased.leaseId })}
              className="font-mono text-xs text-sky-700 hover:underline dark:text-sky-400"
              aria-label={`Lease ${leased.leaseId} on the Leases page`}
            >
              {leased.leaseId}
            </Link>
          </h2>
          <div className="flex flex-wrap items-center gap-2">
            <button
              type="button"
              disabled={Boolean(writeDenied)}
              title={writeDenied}
              onClick={() => void ackAll('completed')}
              className="rounded bg-emerald-600 px-3 py-1 text-white disabled:opacity-50"
            >
              Ack all
            </button>
            <input
              value={failError}
              onChange={(e) => setFailError(e.target.value)}
              className={input}
              aria-label="Failure reason"
            />
            <button
              type="button"
              disabled={Boolean(writeDenied)}
              title={writeDenied}
              onClick={() => void ackAll('failed')}
              className="rounded border border-red-300 px-3 py-1 text-red-700 disabled:opacity-50 dark:border-red-800 dark:text-red-300"
            >
              Fail all
            </button>
            <input
              value={extendBy}
              onChange={(e) => setExtendBy(e.target.value)}
              type="number"
              className={`${input} w-20`}
              aria-label="Extend by seconds"
            />
            <button
              type="button"
              disabled={Boolean(writeDenied)}
              title={writeDenied}
              onClick={() => void perform('Extend', () => extendLease(leased.leaseId, Number(extendBy)))}
              className="rounded border border-zinc-300 px-3 py-1 disabled:opacity-50 dark:border-zinc-700"
            >
              Extend
            </button>
            <input
              value={releaseReason}
              onChange={(e) => setReleaseReason(e.target.value)}
              placeholder="reason to release"
              className={input}
              aria-label="Release reason"
            />
            <button
              type="button"
              disabled={!releaseReason.trim() || Boolean(adminDenied)}
              title={adminDenied}
              onClick={() => void perform('Release', () => releaseLease(leased.leaseId, releaseReason))}
              className="rounded border border-red-300 px-3 py-1 text-red-700 disabled:opacity-50 dark:border-red-800 dark:text-red-300"
            >
              Release
            </button>
          </div>
          {action && (
            <div>
              <h3 className="text-xs font-semibold">{action.label}:</h3>
              {Array.isArray(action.result) && action.result[0]?.expiresAt && (
                <p className="text-xs" data-testid="extended-until">
                  The lease now <Countdown expiresAt={action.result[0].expiresAt} />.
                </p>
              )}
              <pre
                className="max-h-64 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900"
                data-testid="action-result"
              >
                {JSON.stringify(action.result, null, 2)}
              </pre>
            </div>
          )}
        </section>
      )}
    </div>
  );
}

/**
 * A dry run held back by other leases of the group: each one's partition, holder, its expiry as a
 * countdown against the server's clock (the UTC time as its title, as elsewhere) and the lease
 * linked to the Leases page.
 */
function HeldBy({ why }: { why: NonNullable<Reply['why']> }) {
  const leases = why.leases ?? [];
  const more = (why.held ?? leases.length) - leases.length;
  return (
    <div className="text-sm font-medium text-amber-800 dark:text-amber-300" data-testid="dry-run-why">
      <p>Held by other leases of group {why.group}:</p>
      <ul className="list-disc pl-5">
        {leases.map((l) => (
          <li key={l.leaseId}>
            {l.partition} is leased by {l.holder ?? 'an unknown holder'}, <Countdown expiresAt={l.expiresAt} /> (lease{' '}
            <Link
              href={leasesHref({ lease: l.leaseId })}
              className="font-mono text-xs text-sky-700 hover:underline dark:text-sky-400"
            >
              {l.leaseId}
            </Link>
            )
          </li>
        ))}
      </ul>
      {more > 0 && <p>and {more} more.</p>}
    </div>
  );
}
