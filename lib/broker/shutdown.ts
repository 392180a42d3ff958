import { waiters } from './waiters';

const slot = globalThis as unknown as { __queenDraining?: boolean };

/** True once the server is shutting down: pops answer the empty 204 at once and claim nothing. */
export const draining = (): boolean => slot.__queenDraining === true;

/** Starts the drain: every parked long poll wakes, sees it, and answers. */
export function beginDrain(): void {
  slot.__queenDraining = true;
  waiters.wakeAll();
}
