import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { isUuid } from '@/lib/uuid';
import { retryingConflicts } from './conflicts';
import { HttpError, notFound } from './errors';
import { name, parseWith, pathName, reasonText } from './validate';
import { wakeLocal } from './waiters';

export const SET_ASIDE_ACTIONS = ['dead-letter', 'skip'] as const;

export const setAsideBody = z
  .object({
    /** `dead-letter`: to the group's dead letters (requeue or discard them there); `skip`: done, kept nowhere */
    action: z.enum(SET_ASIDE_ACTIONS),
    /** the message; absent: the first one the group has not done (the one its cursor is stuck on) */
    transactionId: name.optional(),
    /**
     * The lease the operator saw on it (null: none). Given, the action is refused (409) unless that
     * is still the lease on it, so a message a new holder just claimed is not taken from under it.
     */
    leaseId: z.string().refine(isUuid, 'must be a lease id (a UUID)').nullable().optional(),
    /**
     * Refused because another lease holds the message now, hold the cursor (a pause that resumes by
     * itself in 2 minutes) so that lease stays the one on it; the 409 names it, and the same call with
     * its id then acts and lifts the hold. The dashboard sends it: a consumer that re-claims the
     * message every few seconds otherwise wins every race against a person reading a dialog.
     */
    hold: z.boolean().optional(),
    reason: reasonText,
  })
  .strict()
  .refine((b) => (b.reason ?? '').trim() !== '', {
    message: 'must say why (it goes to the audit log)',
    path: ['reason'],
  });

export interface SetAside {
  queue: string;
  partition: string;
  partitionId: string;
  group: string;
  offset: number;
  transactionId: string;
  /** the group's committed offset after it: the next pop starts just above */
  committed: number;
  failures: number;
  deliveries: number;
  holder: string | null;
  leaseEnded?: boolean;
  leaseId?: string;
  leaseExpired?: boolean;
}

/** A refused way out (409): what holds the message now, and whether the cursor is held for the next try. */
export interface SetAsideRefusal {
  error: string;
  currentLeaseId: string | null;
  offset?: number;
  transactionId?: string;
  holder?: string | null;
  claimedAt?: string | null;
  expiresAt?: string | null;
  deliveries?: number;
  /** the hold's auto-resume time, when the cursor is held */
  heldUntil?: string | null;
}

/**
 * A way out for a poison message (sql/functions/ways_out.sql, queen.set_aside): it goes to the
 * group's dead letters or is skipped, counts as done for the group, and the lease on it ends as a
 * force release ends it (its holder's acks with that id are refused). Audited.
 */
export async function setAside(partitionId: string, group: string, body: unknown, actor: string): Promise<SetAside> {
  pathName(group, 'group');
  const b = parseWith(setAsideBody, body);
  if (!isUuid(partitionId)) throw notFound('Partition not found');
  const { rows } = await retryingConflicts(() =>
    db().execute<{ r: SetAside & { error?: string; status?: number; currentLeaseId?: string | null } }>(sql`
      select queen.set_aside(${partitionId}::uuid, ${group}, ${b.transactionId ?? null}, ${b.leaseId !== undefined},
                             ${b.leaseId ?? null}::uuid, ${b.action}, ${b.reason!.trim()}, ${actor},
                             ${b.hold ?? false}) as r`),
  );
  const r = rows[0].r;
  if (r.error) {
    const { status, ...refusal } = r as unknown as SetAsideRefusal & { status?: number };
    throw new HttpError(status ?? 409, r.error, { ...refusal, currentLeaseId: refusal.currentLeaseId ?? null });
  }
  wakeLocal([r.queue]);
  return r;
}
