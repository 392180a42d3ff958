'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { count } from '@/lib/dashboard/format';
import { ReasonAction } from './reason-action';
import { type SeekPreview, seek, seekPreview } from './client/consumer-groups';

type Target = 'end' | 'beginning' | 'time';

const BEGINNING = '1970-01-01T00:00:00.000Z';
const SHOWN_CHANGES = 20;
const input = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-950';

/**
 * Moves the group's cursors on the queue (every partition, or one) to the end, the beginning or a
 * time; the dialog shows, before the seek is confirmed, what it skips and replays per partition.
 */
export function SeekAction({ queue, group }: { queue: string; group: string }) {
  const [open, setOpen] = useState(false);
  const [target, setTarget] = useState<Target>('end');
  const [local, setLocal] = useState('');
  const [partition, setPartition] = useState('');
  const timestamp =
    target === 'beginning' ? BEGINNING : target === 'time' && local ? new Date(local).toISOString() : null;
  const ready = target === 'end' || timestamp !== null;
  const body = target === 'end' ? { toEnd: true } : { timestamp };
  const qs = new URLSearchParams({
    ...(target === 'end' ? { toEnd: 'true' } : { timestamp: timestamp ?? '' }),
    ...(partition ? { partition } : {}),
  });
  const preview = useQuery<SeekPreview>({
    queryKey: ['seek-preview', queue, group, qs.toString()],
    queryFn: ({ signal }) => seekPreview(group, queue, qs.toString(), signal),
    enabled: open && ready,
    retry: false,
  });
  // the pages after the first, counted when asked for (each is a bounded read of its own)
  const [more, setMore] = useState<{ qs: string; pages: SeekPreview[]; busy: boolean }>({
    qs: '',
    pages: [],
    busy: false,
  });
  const pages = preview.data ? [preview.data, ...(more.qs === qs.toString() ? more.pages : [])] : [];
  const p = pages.length ? total(pages) : undefined;
  const countMore = async () => {
    if (!p?.next) return;
    const key = qs.toString();
    setMore((m) => ({ qs: key, pages: m.qs === key ? m.pages : [], busy: true }));
    try {
      const page = await seekPreview(group, queue, `${key}&after=${encodeURIComponent(p.next)}`);
      setMore((m) => ({ qs: key, pages: [...(m.qs === key ? m.pages : []), page], busy: false }));
    } catch {
      setMore((m) => ({ ...m, busy: false }));
    }
  };
  const where = partition ? `partition ${partition} of ${queue}` : `every partition of ${queue}`;
  const to = target === 'end' ? 'the end' : target === 'beginning' ? 'the beginning' : 'the chosen time';
  return (
    <ReasonAction
      label="Seek…"
      title={`Move ${group}'s cursors on ${queue}?`}
      confirmLabel="Seek"
      onOpenChange={setOpen}
      success={`Moved ${group}'s cursors on ${where} to ${to}`}
      description={
        <div className="space-y-2">
          <div className="flex flex-wrap gap-2">
            <label className="flex flex-col">
              <span className="text-xs text-muted">Move to</span>
              <select
                value={target}
                onChange={(e) => setTarget(e.target.value as Target)}
                aria-label="Seek target"
                className={input}
              >
                <option value="end">the end (skip the backlog)</option>
                <option value="beginning">the beginning (replay what is stored)</option>
                <option value="time">a point in time</option>
              </select>
            </label>
            {target === 'time' && (
              <label className="flex flex-col">
                <span className="text-xs text-muted">First message pushed at or after (your local time)</span>
                <input
                  type="datetime-local"
                  step="1"
                  value={local}
                  onChange={(e) => setLocal(e.target.value)}
                  aria-label="Seek time"
                  className={input}
                />
              </label>
            )}
            <label className="flex flex-col">
              <span className="text-xs text-muted">Only partition (empty: every partition)</span>
              <input
                value={partition}
                onChange={(e) => setPartition(e.target.value)}
                aria-label="Only partition"
                className={input}
              />
            </label>
          </div>
          <p>
            Every live lease of the group {partition ? 'on that partition' : 'on the queue'} ends, moved or not. An ack
            carrying its lease id is then refused for an offset not yet done, and changes nothing for one the seek
            skipped (already done); an ack without a lease id is judged against whatever lease is live on its offset
            then.
          </p>
          <div aria-live="polite" data-testid="seek-preview" className="rounded bg-zinc-100 p-2 dark:bg-zinc-800">
            {!ready ? (
              'Choose a time to see what the seek does.'
            ) : preview.isFetching && !p ? (
              'Counting…'
            ) : preview.error ? (
              <span className="text-red-600">{(preview.error as Error).message}</span>
            ) : p ? (
              <>
                <p>
                  Skips <strong data-testid="preview-skipped">{count(p.skipped)}</strong> unconsumed messages and
                  replays <strong data-testid="preview-replayed">{count(p.replayed)}</strong>, moving{' '}
                  {count(p.partitionsMoved)} of {count(p.partitions)} partitions;{' '}
                  <span data-testid="preview-leases">{count(p.leasesEnded)}</span> live leases end.
                </p>
                {p.changes.length > 0 && (
                  <table className="mt-1 w-full text-xs">
                    <thead className="text-muted">
                      <tr>
                        <th className="text-left">partition</th>
                        <th className="text-right">from → to</th>
                        <th className="text-right">skips</th>
                        <th className="text-right">replays</th>
                      </tr>
                    </thead>
                    <tbody>
                      {p.changes.slice(0, SHOWN_CHANGES).map((c) => (
                        <tr key={c.partition} data-testid={`preview-${c.partition}`}>
                          <td className="font-mono">
                            {c.partition}
                            {c.endsLease ? ' (lease ends)' : ''}
                          </td>
                          <td className="text-right tabular-nums">
                            {c.committed} → {c.target}
                          </td>
                          <td className="text-right tabular-nums">{count(c.skipped)}</td>
                          <td className="text-right tabular-nums">{count(c.replayed)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
                {(p.changesTruncated || p.changes.length > SHOWN_CHANGES) && (
                  <p className="text-xs text-muted">
                    … the first {SHOWN_CHANGES} partitions by name; the totals count them all.
                  </p>
                )}
                {p.next !== null && (
                  <p className="text-xs text-muted" data-testid="preview-more">
                    Counted over the first {count(p.partitions)} partitions by name; the queue has more.{' '}
                    <button
                      type="button"
                      onClick={countMore}
                      disabled={more.busy}
                      className="text-sky-700 underline disabled:opacity-40 dark:text-sky-400"
                    >
                      Count the next page
                    </button>
                  </p>
                )}
              </>
            ) : null}
          </div>
        </div>
      }
      run={async (reason) => {
        if (!ready) throw new Error('Choose a time first.');
        return seek(group, queue, partition, { ...body, reason });
      }}
    />
  );
}

/** The totals of several pages of one preview (its group, queue and target are the first page's); the changes listed are the first page's and after. */
function total(pages: SeekPreview[]): SeekPreview {
  const sum = (f: (p: SeekPreview) => number) => pages.reduce((n, p) => n + f(p), 0);
  return {
    ...pages[0],
    partitions: sum((p) => p.partitions),
    partitionsMoved: sum((p) => p.partitionsMoved),
    skipped: sum((p) => p.skipped),
    replayed: sum((p) => p.replayed),
    leasesEnded: sum((p) => p.leasesEnded),
    changes: pages.flatMap((p) => p.changes),
    changesTruncated: pages.some((p) => p.changesTruncated),
    next: pages[pages.length - 1].next,
  };
}
