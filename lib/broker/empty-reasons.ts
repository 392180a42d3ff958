/**
 * Why a pop found nothing: one vocabulary (issue 31) for the pop's answer (`X-Queen-Empty`), a parked
 * pop's answer at its deadline, and the console's dry run (`empty`, and `why.reason` for what an idle
 * answer hides). queen.pop_empty_reason (sql/functions/pop.sql) names the cause the pop skipped the
 * group's pending partitions for by these words (the block that ends first); tests/empty-reasons.test.ts
 * puts the three paths in the same situations and expects the same word.
 */
export const EMPTY_REASONS = {
  idle: 'nothing of the scope is claimable by this group now',
  paused:
    'the partition asked for is paused, or every pending partition of the queue is held by a pause (and the rest by leases or retry delays)',
  leased: "the group's pending messages are held by leases (of other consumers, or this one's unacked batch)",
  'retry-delay': 'a failed batch waits out its retry delay (retryDelay) before it is delivered again',
  'window-buffer': 'the partition had a push within windowBuffer seconds: it waits for the burst to end',
  delayed: 'the pending messages are younger than delayedProcessing seconds',
  maintenance: 'pop maintenance is on',
  error: 'the pop function failed (the server logged why)',
  shutdown: 'the server is shutting down',
} as const;

export type EmptyReason = keyof typeof EMPTY_REASONS;

export const isEmptyReason = (value: unknown): value is EmptyReason =>
  typeof value === 'string' && Object.hasOwn(EMPTY_REASONS, value);

/** What the console's dry run names behind an `idle` (its `why.reason`): an operator's question, never on the wire of a pop. */
export const IDLE_BECAUSE = {
  'no-queue': 'the queue does not exist (a pop would create it, empty)',
  'no-partition': 'the queue has no partition of that name',
} as const;

export type IdleBecause = keyof typeof IDLE_BECAUSE;
