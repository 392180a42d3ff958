import { driverError } from './errors';

/** deadlock_detected, serialization_failure: PostgreSQL rolled the whole transaction back. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 4;

/**
 * Runs `work` (one whole transaction: a single statement on the pool, or `db().transaction`)
 * again when PostgreSQL chose it as a deadlock victim. Nothing of the failed attempt was written,
 * so running it again is safe; a short random pause lets the other transaction finish first.
 */
export async function retryingConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has(driverError(err)?.code ?? '')) throw err;
      await new Promise((r) => setTimeout(r, attempt * 5 + Math.random() * 20));
    }
  }
}
