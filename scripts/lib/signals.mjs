// One signal, one shutdown. A Ctrl-C or a SIGTERM to a process group reaches every process in it,
// and `npm start` (npm forwards what it gets to its child) and scripts/start.mjs pass it on again:
// the same request to stop arrives two or three times within milliseconds. Signals that close
// together are one delivery; a signal after that is a second, explicit one.

/** Signals this close to the first one are the same delivery. */
export const SAME_DELIVERY_MS = 1000;

/**
 * Calls `first(signal)` once for the first SIGINT/SIGTERM, and `again(signal)` for each one that
 * comes later than SAME_DELIVERY_MS after it; those in between are dropped.
 * @param {{ first: (signal: NodeJS.Signals) => void, again: (signal: NodeJS.Signals) => void, windowMs?: number }} handlers
 */
export function onStopSignals({ first, again, windowMs = SAME_DELIVERY_MS }) {
  /** @type {number | undefined} */
  let firstAt;
  /** @param {NodeJS.Signals} signal */
  const handle = (signal) => {
    const now = performance.now();
    if (firstAt === undefined) {
      firstAt = now;
      first(signal);
    } else if (now - firstAt > windowMs) again(signal);
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}
