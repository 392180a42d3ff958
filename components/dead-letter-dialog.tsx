'use client';
import { useQuery } from '@tanstack/react-query';
import type { DeadLetterResult, OtherGroupState } from '@/lib/broker/dead-letter-actions';
import { count, plural } from '@/lib/dashboard/format';
import {
  actOnDeadLetters,
  type DeadLetterKey,
  type DeadLetterKind,
  type DeadLetterTarget,
  dryRunDeadLetters,
} from './client/dead-letters';

export const deadLetterKey = (d: DeadLetterKey) => `${d.partitionId}/${d.consumerGroup}/${d.offset}`;

/** The server's dry run of the action, in words: how many of what, in which queues, reaching which other groups. */
function DryRun({ kind, target }: { kind: DeadLetterKind; target: DeadLetterTarget }) {
  const { data: preview, error } = useQuery({
    queryKey: ['dead-letter-dry-run', kind, target],
    queryFn: ({ signal }) => dryRunDeadLetters(kind, target, signal),
    staleTime: Infinity,
    gcTime: 0,
  });
  if (error)
    return (
      <p role="alert" className="text-red-600">
        Could not check what this would do: {(error as Error).message}
      </p>
    );
  if (!preview) return <p>Checking what this would do…</p>;
  const perQueue = preview.queues.map((q) => `${q.queue} (${count(q.deadLetters)})`).join(', ');
  const gone = preview.notFound > 0 && (
    <p>
      {plural(preview.notFound, 'selected dead letter')} no longer exist{preview.notFound === 1 ? 's' : ''} (already
      requeued or discarded).
    </p>
  );
  if (preview.deadLetters === 0)
    return (
      <div data-testid="action-description">
        <p>There is nothing to {kind}: no dead letter left.</p>
        {gone}
      </div>
    );
  if (kind === 'discard') {
    return (
      <div className="space-y-2" data-testid="action-description">
        <p>
          <strong>{plural(preview.deadLetters, 'dead letter')}</strong> in {perQueue} will be removed for good. The
          messages stay done for their groups and are not delivered again.
        </p>
        {gone}
      </div>
    );
  }
  const it = preview.messages === 1 ? 'it' : 'them';
  return (
    <div className="space-y-2" data-testid="action-description">
      <p>
        <strong>{plural(preview.messages, 'message')}</strong> ({plural(preview.deadLetters, 'dead letter')} in{' '}
        {perQueue}) will be pushed again to
        {preview.messages === 1 ? ' its partition as a new message' : ' their partitions as new messages'} (same
        payload, transaction id
        <span className="font-mono"> &lt;original&gt;.requeue-n</span>) for the group whose dead letter it is only, and
        the dead letters removed.
      </p>
      <ul className="list-disc pl-5">
        {preview.queues.map((q) => (
          <li key={q.queue}>
            {q.otherGroups.length === 0 ? (
              <>
                In {q.queue} no other group reads {preview.messages === 1 ? 'its partition' : 'their partitions'}.
              </>
            ) : (
              <>
                In {q.queue}, the other groups do not receive {it} again (counted as done for them). With the original
                {preview.messages === 1 ? '' : 's'}:
                <ul className="list-[circle] pl-5" data-testid="other-groups">
                  {q.otherGroups.map((g) => (
                    <li key={g.group}>
                      <span className="font-mono">{g.group}</span>: {otherGroupState(g, preview.messages === 1)}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </li>
        ))}
      </ul>
      {gone}
    </div>
  );
}

/** What another group did with the original(s): "done", "leased now" for one message, counts for several. */
function otherGroupState(g: OtherGroupState, one: boolean) {
  const states: [number, string, string][] = [
    [g.done, 'done', 'done'],
    [g.leased, 'leased now (being processed)', 'leased now'],
    [g.pending, 'pending (not reached yet)', 'pending'],
    [g.deadLettered, 'dead-lettered too (its own dead letter stays)', 'dead-lettered too'],
  ];
  const shown = states.filter(([n]) => n > 0);
  if (one) return shown[0]?.[1] ?? 'unknown';
  return shown.map(([n, , short]) => `${count(n)} ${short}`).join(', ');
}

/** What an action did, in one sentence. */
function outcome(kind: DeadLetterKind, results: DeadLetterResult[]) {
  const done = results.filter((r) => r.success);
  const missing = results.filter((r) => r.error === 'Dead letter not found').length;
  const messageGone = results.filter((r) => r.error === 'Message no longer exists').length;
  const copies = new Set(done.map((r) => r.newTransactionId).filter((id) => id)).size;
  const skipped = [...new Set(done.flatMap((r) => r.doneFor ?? []))];
  return (
    `${kind === 'requeue' ? 'Requeued' : 'Discarded'} ${plural(done.length, 'dead letter')}${kind === 'requeue' ? ` as ${plural(copies, 'new message')}` : ''}.` +
    (skipped.length ? ` Counted done for ${skipped.join(', ')}.` : '') +
    (missing ? ` ${plural(missing, 'dead letter')} no longer existed (already requeued or discarded).` : '') +
    (messageGone
      ? ` ${plural(messageGone, 'dead letter')} kept: the message no longer exists (discard it instead).`
      : '')
  );
}

/**
 * A requeue or discard for `ReasonDialog` / `ReasonAction`: the dry run says what it will do, the
 * confirmation what it did; `onResults` sees each dead letter's result (the page keeps acted-on rows).
 */
export function deadLetterDialog(
  kind: DeadLetterKind,
  target: DeadLetterTarget,
  what: string,
  onResults?: (results: DeadLetterResult[]) => void,
) {
  const verb = kind === 'discard' ? 'Discard' : 'Requeue';
  return {
    title: `${verb} ${what}?`,
    description: <DryRun kind={kind} target={target} />,
    confirmLabel: verb,
    success: (reply: unknown) => outcome(kind, (reply as { results: DeadLetterResult[] }).results),
    run: async (reason: string) => {
      const reply = (await actOnDeadLetters(kind, target, reason)) as { results: DeadLetterResult[] };
      onResults?.(reply.results);
      return reply;
    },
  };
}
