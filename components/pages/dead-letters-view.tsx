'use client';
import Link from 'next/link';
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { DeadLetterPreview, DeadLetterResult } from '@/lib/broker/dead-letter-actions';
import { MAX_DEAD_LETTER_ITEMS } from '@/lib/dashboard/dead-letter-filters';
import { count, utc } from '@/lib/dashboard/format';
import { DEAD_LETTERS_PAGE_SIZE, deadLetterQuery } from '@/lib/dashboard/dead-letter-filters';
import { messageHref } from '@/lib/dashboard/links';
import { withSearch } from '@/lib/dashboard/search';
import { api } from '../api';
import { useLiveQuery } from '../providers';
import { ReasonDialog } from '../reason-dialog';
import { useDenied } from '../session';
import { UrlTextFilter, useUrlState } from '../url-state';

export interface DeadLetter {
  id: string;
  transactionId: string;
  partitionId: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  offset: number;
  errorMessage: string | null;
  retryCount: number;
  data: unknown;
  failedAt: string;
}

export interface DeadLetterPage {
  messages: DeadLetter[];
  pagination: { limit: number; offset: number; total: number };
}

/** What an action acts on: dead letters by key, or every one the page's filters match. */
type Target = { items: { partitionId: string; consumerGroup: string; offset: number }[] } | { filter: Record<string, string> };
type Action = { kind: 'requeue' | 'discard'; target: Target };

const keyOf = (d: Pick<DeadLetter, 'partitionId' | 'consumerGroup' | 'offset'>) => `${d.partitionId}/${d.consumerGroup}/${d.offset}`;
const itemsOf = (rows: DeadLetter[]): Target => ({ items: rows.map((r) => ({ partitionId: r.partitionId, consumerGroup: r.consumerGroup, offset: r.offset })) });
const link = 'text-sky-700 hover:underline dark:text-sky-400';
const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** The server's dry run of the action, in words: how many of what, in which queues, reaching which other groups. */
function Description({ action, preview }: { action: Action; preview: DeadLetterPreview | null }) {
  if (!preview) return <p>Checking what this would do…</p>;
  const perQueue = preview.queues.map((q) => `${q.queue} (${count(q.deadLetters)})`).join(', ');
  const gone = preview.notFound > 0 && <p>{plural(preview.notFound, 'selected dead letter')} no longer exist{preview.notFound === 1 ? 's' : ''} (already requeued or discarded).</p>;
  if (action.kind === 'discard') {
    return (
      <div className="space-y-2" data-testid="action-description">
        <p><strong>{plural(preview.deadLetters, 'dead letter')}</strong> in {perQueue} will be removed for good. The messages stay done for their groups and are not delivered again.</p>
        {gone}
      </div>
    );
  }
  const it = preview.messages === 1 ? 'it' : 'them';
  return (
    <div className="space-y-2" data-testid="action-description">
      <p>
        <strong>{plural(preview.messages, 'message')}</strong> ({plural(preview.deadLetters, 'dead letter')} in {perQueue}) will be pushed again to
        {preview.messages === 1 ? ' its partition as a new message' : ' their partitions as new messages'} (same payload, transaction id
        <span className="font-mono"> &lt;original&gt;.requeue-n</span>), and the dead letters removed.
      </p>
      <ul className="list-disc pl-5">
        {preview.queues.map((q) => (
          <li key={q.queue}>
            {q.otherGroups.length === 0
              ? <>In {q.queue} no other group receives {it}.</>
              : <>In {q.queue}, {plural(q.otherGroups.length, 'other group')} also receive{q.otherGroups.length === 1 ? 's' : ''} {it}: <span className="font-mono">{q.otherGroups.join(', ')}</span>.</>}
          </li>
        ))}
      </ul>
      {gone}
    </div>
  );
}

/** What an action did, shown until the next one. */
function outcome(kind: Action['kind'], results: DeadLetterResult[]) {
  const done = results.filter((r) => r.success);
  const missing = results.length - done.length;
  const copies = [...new Map(done.map((r) => [r.newTransactionId, r])).values()];
  return {
    text: `${kind === 'requeue' ? 'Requeued' : 'Discarded'} ${plural(done.length, 'dead letter')}${kind === 'requeue' ? ` as ${plural(copies.length, 'new message')}` : ''}.` +
      (missing ? ` ${plural(missing, 'dead letter')} no longer existed (already requeued or discarded).` : ''),
    copies: kind === 'requeue' ? copies : [],
  };
}

const select = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';

/** A time filter in UTC, landing in the URL as ISO 8601. */
function UtcTimeFilter({ name, label, value }: { name: string; label: string; value: string | undefined }) {
  const { set } = useUrlState();
  return (
    <label className="flex flex-col">
      <span className="text-xs text-zinc-500">{label}</span>
      <input type="datetime-local" aria-label={label} defaultValue={value ? value.slice(0, 16) : ''} className={select}
        onChange={(e) => set({ [name]: e.target.value ? `${e.target.value.slice(0, 16)}:00Z` : null, page: null })} />
    </label>
  );
}

/** Dead letters, filtered and paged on the server, with requeue and discard of one or many. */
export function DeadLettersView({ initial, filters }: { initial: DeadLetterPage; filters: Record<string, string | undefined> }) {
  const { set } = useUrlState();
  const client = useQueryClient();
  const denied = useDenied('admin');
  const { data = initial, error } = useLiveQuery<DeadLetterPage>(['dead-letters', filters], withSearch('/api/v1/dlq', deadLetterQuery(filters)), initial);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [action, setAction] = useState<Action | null>(null);
  const [preview, setPreview] = useState<DeadLetterPreview | null>(null);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const [done, setDone] = useState<ReturnType<typeof outcome> | null>(null);
  const page = Math.max(1, Number(filters.page ?? 1) || 1);
  const total = data.pagination.total;
  const first = data.messages.length === 0 ? 0 : (page - 1) * DEAD_LETTERS_PAGE_SIZE + 1;
  const last = first === 0 ? 0 : first + data.messages.length - 1;
  const chosen = data.messages.filter((d) => selected.has(keyOf(d)));
  const allOnPage = data.messages.length > 0 && chosen.length === data.messages.length;
  const toggle = (d: DeadLetter) => setSelected((s) => {
    const next = new Set(s);
    if (!next.delete(keyOf(d))) next.add(keyOf(d));
    return next;
  });
  const open = async (next: Action) => {
    setActionError(null);
    setPreview(null);
    setAction(next);
    try {
      setPreview(await api<DeadLetterPreview>('POST', `/api/v1/dlq/${next.kind}`, { ...next.target, dryRun: true }));
    } catch (err) {
      setActionError((err as Error).message);
    }
  };
  const matching = { filter: Object.fromEntries(Object.entries(deadLetterQuery(filters)).filter(([k, v]) => v && !['limit', 'offset'].includes(k))) as Record<string, string> };
  const tooMany = total > MAX_DEAD_LETTER_ITEMS ? `at most ${count(MAX_DEAD_LETTER_ITEMS)} per action: narrow the filters` : undefined;
  const text = (name: string, label: string, className?: string) => <UrlTextFilter name={name} label={label} value={filters[name]} className={className} />;
  const button = 'rounded border px-2 py-0.5 text-xs disabled:opacity-50';
  const danger = `${button} border-red-300 text-red-700 hover:bg-red-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950`;
  const neutral = `${button} border-zinc-300 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800`;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Dead letters</h1>
        <p className="text-sm text-zinc-500">Messages a group failed more often than the queue&apos;s retry limit. Requeue pushes one again as a new message of its partition (every group consuming it receives it); discard removes the dead letter.</p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        {text('queue', 'Queue (exact)')}
        {text('group', 'Group (exact)')}
        {text('error', 'Error contains (any case)', 'w-56')}
        <UtcTimeFilter name="since" label="Failed since (UTC)" value={filters.since} />
        <UtcTimeFilter name="until" label="Failed before (UTC)" value={filters.until} />
        <div className="ml-auto flex items-center gap-2">
          <span className="text-zinc-500" data-testid="dead-letter-count">{plural(total, 'dead letter')}</span>
          <span className="text-zinc-500" data-testid="dead-letter-range">{count(first)}–{count(last)}</span>
          <button type="button" disabled={page <= 1} onClick={() => set({ page: page - 1 > 1 ? page - 1 : null })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Previous</button>
          <button type="button" disabled={page * DEAD_LETTERS_PAGE_SIZE >= total} onClick={() => set({ page: page + 1 })} className="rounded border border-zinc-300 px-2 py-1 disabled:opacity-40 dark:border-zinc-700">Next</button>
        </div>
      </div>
      {error && <p role="alert" className="text-sm text-red-600">{(error as Error).message}</p>}
      {done && (
        <div role="status" className="rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" data-testid="action-outcome">
          {done.text}
          {done.copies.length > 0 && done.copies.length <= 5 && (
            <> New: {done.copies.map((c, i) => (
              <span key={c.newTransactionId}>{i > 0 && ', '}<Link href={messageHref(c.partitionId, c.newTransactionId!)} className={`font-mono ${link}`}>{c.newTransactionId}</Link></span>
            ))}</>
          )}
          <button type="button" onClick={() => setDone(null)} className="ml-2 text-xs underline">dismiss</button>
        </div>
      )}
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <span className="text-zinc-500" data-testid="selected-count">{count(chosen.length)} selected</span>
        <button type="button" className={neutral} disabled={chosen.length === 0 || Boolean(denied)} title={denied}
          onClick={() => open({ kind: 'requeue', target: itemsOf(chosen) })}>Requeue selected</button>
        <button type="button" className={danger} disabled={chosen.length === 0 || Boolean(denied)} title={denied}
          onClick={() => open({ kind: 'discard', target: itemsOf(chosen) })}>Discard selected</button>
        <span className="ml-3 text-zinc-500">or</span>
        <button type="button" className={neutral} disabled={total === 0 || Boolean(denied ?? tooMany)} title={denied ?? tooMany}
          onClick={() => open({ kind: 'requeue', target: matching })}>Requeue all {count(total)} matching</button>
        <button type="button" className={danger} disabled={total === 0 || Boolean(denied ?? tooMany)} title={denied ?? tooMany}
          onClick={() => open({ kind: 'discard', target: matching })}>Discard all {count(total)} matching</button>
      </div>
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-zinc-500 dark:border-zinc-800">
            <tr>
              <th className="py-2 pr-2">
                <input type="checkbox" aria-label="Select every dead letter on this page" checked={allOnPage}
                  onChange={() => setSelected(allOnPage ? new Set() : new Set(data.messages.map(keyOf)))} />
              </th>
              <th className="pr-3">Queue / partition</th>
              <th className="pr-3">Group</th>
              <th className="pr-3 text-right">Offset</th>
              <th className="pr-3">Message</th>
              <th className="pr-3">Payload</th>
              <th className="pr-3">Last error</th>
              <th className="pr-3 text-right">Attempts</th>
              <th className="pr-3">Failed at</th>
              <th className="pr-3" />
            </tr>
          </thead>
          <tbody>
            {data.messages.map((d) => {
              const payload = JSON.stringify(d.data);
              const name = `${d.transactionId} of ${d.queue}/${d.partition} for ${d.consumerGroup}`;
              return (
                <tr key={keyOf(d)} className="border-b border-zinc-100 align-top dark:border-zinc-900" data-testid={`dead-letter-${d.transactionId}`}>
                  <td className="py-2 pr-2"><input type="checkbox" aria-label={`Select dead letter ${name}`} checked={selected.has(keyOf(d))} onChange={() => toggle(d)} /></td>
                  <td className="pr-3">
                    <Link href={`/queues/${encodeURIComponent(d.queue)}?partition=${encodeURIComponent(d.partition)}&group=${encodeURIComponent(d.consumerGroup)}`} className={`font-mono ${link}`}>{d.queue} / {d.partition}</Link>
                  </td>
                  <td className="pr-3 font-mono">{d.consumerGroup}</td>
                  <td className="pr-3 text-right tabular-nums">{count(d.offset)}</td>
                  <td className="pr-3"><Link href={messageHref(d.partitionId, d.transactionId)} className={`break-all font-mono text-xs ${link}`}>{d.transactionId}</Link></td>
                  <td className="max-w-[16rem] pr-3">
                    <details>
                      <summary className="cursor-pointer truncate font-mono text-xs" title="show the whole payload">{payload.length > 60 ? `${payload.slice(0, 60)}…` : payload}</summary>
                      <pre className="mt-1 max-h-64 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900">{JSON.stringify(d.data, null, 2)}</pre>
                    </details>
                  </td>
                  <td className="max-w-[20rem] break-words pr-3 text-red-700 dark:text-red-300">{d.errorMessage ?? '—'}</td>
                  <td className="pr-3 text-right tabular-nums">{d.retryCount}</td>
                  <td className="whitespace-nowrap pr-3 text-xs">{utc(d.failedAt)}</td>
                  <td className="space-x-1 whitespace-nowrap pr-3">
                    <button type="button" className={neutral} disabled={Boolean(denied)} title={denied} aria-label={`Requeue ${name}`}
                      onClick={() => open({ kind: 'requeue', target: itemsOf([d]) })}>Requeue</button>
                    <button type="button" className={danger} disabled={Boolean(denied)} title={denied} aria-label={`Discard ${name}`}
                      onClick={() => open({ kind: 'discard', target: itemsOf([d]) })}>Discard</button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {data.messages.length === 0 && <p className="py-6 text-center text-sm text-zinc-500">{total > 0 ? 'This page is past the last dead letter.' : 'No dead letter matches.'}</p>}
      </div>
      <ReasonDialog
        open={action !== null}
        title={`${action?.kind === 'discard' ? 'Discard' : 'Requeue'} ${action && 'filter' in action.target ? 'every matching dead letter' : plural(action && 'items' in action.target ? action.target.items.length : 0, 'dead letter')}?`}
        description={action && <Description action={action} preview={preview} />}
        confirmLabel={action?.kind === 'discard' ? 'Discard' : 'Requeue'}
        busy={busy || preview === null}
        error={actionError}
        onCancel={() => setAction(null)}
        onConfirm={async (reason) => {
          if (!action) return;
          setBusy(true);
          try {
            const reply = await api<{ results: DeadLetterResult[] }>('POST', `/api/v1/dlq/${action.kind}`, { ...action.target, reason });
            setDone(outcome(action.kind, reply.results));
            const acted = new Set(reply.results.map(keyOf));
            setSelected((s) => new Set([...s].filter((k) => !acted.has(k))));
            setAction(null);
            await client.invalidateQueries();
          } catch (err) {
            setActionError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      />
    </div>
  );
}
