'use client';
import type { SetAside } from '@/lib/broker/set-aside';
import { api } from './api';

export type SetAsideKind = 'dead-letter' | 'skip';

/** What is set aside: one message (its transaction id), or the first one a group has not done (the one a stuck lease or cursor sits on). */
export interface SetAsideTarget {
  partitionId: string;
  partition: string;
  queue: string;
  group: string;
  /** absent: the first message the group has not done */
  transactionId?: string;
  /** the offset shown, for the words */
  offset?: number;
  /** the lease the operator sees on it (null: none): the action is refused if another one holds it by then */
  leaseId: string | null;
  holder?: string | null;
}

/**
 * A way out for a poison message, for `ReasonDialog` / `ReasonAction`: move it to the group's dead
 * letters, or skip it; either way the group is done with it and its next pop delivers the next one.
 */
export const setAsideDialog = (kind: SetAsideKind, t: SetAsideTarget) => {
  const which = t.transactionId ? (
    <>
      message <span className="font-mono break-all">{t.transactionId}</span>
      {t.offset ? ` (offset ${t.offset})` : ''}
    </>
  ) : (
    <>
      the first message group <span className="font-mono">{t.group}</span> has not done
      {t.offset ? ` (offset ${t.offset})` : ''}
    </>
  );
  return {
    title: kind === 'dead-letter' ? 'Move this message to the dead letters?' : 'Skip this message?',
    confirmLabel: kind === 'dead-letter' ? 'Move to dead letters' : 'Skip',
    description: (
      <div className="space-y-2" data-testid="set-aside-description">
        <p>
          {which} of{' '}
          <span className="font-mono">
            {t.queue} / {t.partition}
          </span>{' '}
          {kind === 'dead-letter' ? (
            <>
              goes to the dead letters of group <span className="font-mono">{t.group}</span> (requeue or discard it
              there later)
            </>
          ) : (
            <>
              is skipped by group <span className="font-mono">{t.group}</span> and kept nowhere for it
            </>
          )}
          : the group counts it as done, and its next pop delivers the message after it. Other groups are not affected.
        </p>
        {t.leaseId ? (
          <p>
            The lease <span className="font-mono break-all">{t.leaseId}</span>
            {t.holder ? (
              <>
                {' '}
                of <strong>{t.holder}</strong>
              </>
            ) : null}{' '}
            on it ends, as a force release ends it: its acks with that lease id are refused, and the rest of its span is
            claimable again. If another lease holds the message by the time you confirm, nothing is done.
          </p>
        ) : (
          <p>No lease holds it now; if one does by the time you confirm, nothing is done.</p>
        )}
      </div>
    ),
    success: (result: unknown) => {
      const r = result as SetAside;
      return `${kind === 'dead-letter' ? 'Moved to the dead letters' : 'Skipped'}: offset ${r.offset} of ${r.partition}/${r.group}; the next pop starts at ${r.committed + 1}`;
    },
    run: (reason: string) =>
      api('POST', `/api/v1/cursors/${t.partitionId}/${encodeURIComponent(t.group)}/set-aside`, {
        action: kind,
        reason,
        leaseId: t.leaseId,
        ...(t.transactionId ? { transactionId: t.transactionId } : {}),
      }),
  };
};
