'use client';
import { useRouter } from 'next/navigation';
import { queueHref } from '@/lib/dashboard/links';
import { ReasonAction } from './reason-action';
import { deleteMessage } from './client/messages';

/**
 * Delete one message (DELETE /api/v1/messages/:partitionId/:transactionId, admin, audited as
 * message.delete with the reason): its traces, attempts and dead letters go with it, groups that
 * had not consumed it pass it. Then the queue's page, since this one has nothing left to show.
 */
export function DeleteMessage({
  queue,
  partition,
  partitionId,
  transactionId,
}: {
  queue: string;
  partition: string;
  partitionId: string;
  transactionId: string;
}) {
  const router = useRouter();
  const what = `message ${transactionId} of ${queue}/${partition}`;
  return (
    <ReasonAction
      label="Delete message"
      accessibleName={`Delete ${what}`}
      title={`Delete ${what}?`}
      description={
        <p>
          Message <span className="font-mono">{transactionId}</span> of{' '}
          <span className="font-mono">
            {queue}/{partition}
          </span>{' '}
          is removed for good, with its traces, failed attempts and dead letters. Every group that has not consumed it
          passes it (inside a live lease it counts as acked). This cannot be undone.
        </p>
      }
      confirmLabel="Delete"
      success={`Deleted ${what}.`}
      run={(reason) => deleteMessage(partitionId, transactionId, reason)}
      onDone={() => router.push(queueHref(queue))}
    />
  );
}
