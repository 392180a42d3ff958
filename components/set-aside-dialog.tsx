'use client';
import { useEffect, useSyncExternalStore } from 'react';
import type { SetAside, SetAsideRefusal } from '@/lib/broker/set-aside';
import { relative, utc } from '@/lib/dashboard/format';
import { ApiError } from './api';
import { serverNow } from './clock';
import { pauseCursor, setAside } from './client/cursors';

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

// What the last refusal of an open dialog said holds the message now, by target: the dialog's next
// confirm is fenced by that (the lease that holds it when the operator confirms), not by the one it opened with.
const refusals = new Map<string, SetAsideRefusal>();
const listeners = new Set<() => void>();
const keyOf = (t: SetAsideTarget) => `${t.partitionId}/${t.group}/${t.transactionId ?? ''}/${t.offset ?? ''}`;
function setRefusal(key: string, r: SetAsideRefusal | null) {
  if (r) refusals.set(key, r);
  else refusals.delete(key);
  for (const l of listeners) l();
}
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/**
 * A way out for a poison message, for `ReasonDialog` / `ReasonAction`: move it to the group's dead
 * letters, or skip it; either way the group is done with it and its next pop delivers the next one.
 * Fenced by what holds the message when the operator confirms: a refusal (another lease holds it
 * now) holds the cursor on the server and shows that lease and its holder, and the same confirm then
 * ends exactly that one; Cancel lifts the hold.
 */
export const setAsideDialog = (kind: SetAsideKind, t: SetAsideTarget) => {
  const key = keyOf(t);
  return {
    title: kind === 'dead-letter' ? 'Move this message to the dead letters?' : 'Skip this message?',
    confirmLabel: kind === 'dead-letter' ? 'Move to dead letters' : 'Skip',
    description: <SetAsideDescription kind={kind} target={t} storeKey={key} />,
    success: (result: unknown) => {
      const r = result as SetAside;
      return `${kind === 'dead-letter' ? 'Moved to the dead letters' : 'Skipped'}: offset ${r.offset} of ${r.partition}/${r.group}${r.holder ? ` (lease of ${r.holder} ended)` : ''}; the next pop starts at ${r.committed + 1}`;
    },
    run: async (reason: string) => {
      const seen = refusals.get(key);
      const transactionId = seen?.transactionId ?? t.transactionId;
      try {
        return await setAside(t.partitionId, t.group, {
          action: kind,
          reason,
          leaseId: seen ? seen.currentLeaseId : t.leaseId,
          hold: true,
          ...(transactionId ? { transactionId } : {}),
        });
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && err.body && 'currentLeaseId' in err.body)
          setRefusal(key, err.body as unknown as SetAsideRefusal);
        throw err;
      }
    },
    onCancel: () => {
      const held = refusals.get(key)?.heldUntil;
      setRefusal(key, null);
      if (held)
        void pauseCursor(t.partitionId, t.group, {
          paused: false,
          reason: `${kind} cancelled: the hold taken for it is lifted`,
        });
    },
  };
};

function SetAsideDescription({
  kind,
  target: t,
  storeKey,
}: {
  kind: SetAsideKind;
  target: SetAsideTarget;
  storeKey: string;
}) {
  const now = useSyncExternalStore(
    subscribe,
    () => refusals.get(storeKey),
    () => undefined,
  );
  // a dialog opens fenced by what its row shows; closing it forgets what a refusal said
  useEffect(() => () => setRefusal(storeKey, null), [storeKey]);
  const offset = now?.offset ?? t.offset;
  const txid = now?.transactionId ?? t.transactionId;
  const which = txid ? (
    <>
      message <span className="font-mono wrap-anywhere">{txid}</span>
      {offset ? ` (offset ${offset})` : ''}
    </>
  ) : (
    <>
      the first message group <span className="font-mono">{t.group}</span> has not done
      {offset ? ` (offset ${offset})` : ''}
    </>
  );
  return (
    <div className="space-y-2" data-testid="set-aside-description">
      <p>
        {which} of{' '}
        <span className="font-mono">
          {t.queue} / {t.partition}
        </span>{' '}
        {kind === 'dead-letter' ? (
          <>
            goes to the dead letters of group <span className="font-mono">{t.group}</span> (requeue or discard it there
            later)
          </>
        ) : (
          <>
            is skipped by group <span className="font-mono">{t.group}</span> and kept nowhere for it
          </>
        )}
        : the group counts it as done, and its next pop delivers the message after it. Other groups are not affected.
      </p>
      {now ? (
        <div
          className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          data-testid="set-aside-current"
        >
          {now.currentLeaseId ? (
            <p>
              Since you opened this, lease <span className="font-mono wrap-anywhere">{now.currentLeaseId}</span>
              {now.holder ? (
                <>
                  {' '}
                  of <strong data-testid="set-aside-current-holder">{now.holder}</strong>
                </>
              ) : null}{' '}
              holds it (claimed {relative(now.claimedAt, serverNow())}, delivery {now.deliveries ?? 1}
              {now.expiresAt ? `, expires ${utc(now.expiresAt)}` : ''}).
            </p>
          ) : (
            <p>Since you opened this, the lease on it ended; no lease holds it now.</p>
          )}
          {now.heldUntil ? (
            <p>
              The group is held on this partition (paused until {utc(now.heldUntil)}) so no pop claims it again: confirm
              again to end {now.currentLeaseId ? 'that lease' : 'nothing but the message'} and lift the hold; Cancel
              lifts the hold.
            </p>
          ) : (
            <p>Confirm again to act on what holds it now.</p>
          )}
        </div>
      ) : t.leaseId ? (
        <p>
          The lease <span className="font-mono wrap-anywhere">{t.leaseId}</span>
          {t.holder ? (
            <>
              {' '}
              of <strong>{t.holder}</strong>
            </>
          ) : null}{' '}
          on it ends, as a force release ends it: its acks with that lease id are refused, and the rest of its span is
          claimable again. If another lease holds it when you confirm, you are shown that one (and the group is held so
          it stays) before anything is done.
        </p>
      ) : (
        <p>
          No lease holds it now; if one does when you confirm, you are shown that one (and the group is held so it
          stays) before anything is done.
        </p>
      )}
    </div>
  );
}
