// The rules behind the dashboard's signals, in a module without server imports: the pages' words
// (client code) and the read models (SQL) take them from here.

/**
 * A (queue, group) lag is growing when, against the sample GROWING_MINUTES ago, it is higher now by at
 * least GROWTH_MIN_MESSAGES and by GROWTH_MIN_RATIO of what it was (large enough), and every sample
 * since was above it too, at least 2 of them (sustained): a group keeping up with its traffic goes up
 * and down by a few messages and is never flagged.
 */
export const GROWING_MINUTES = 5;
export const GROWTH_MIN_MESSAGES = 20;
export const GROWTH_MIN_RATIO = 0.2;

/**
 * A holder is silent (likely dead or hung) when it holds a lease past its current expiry, or holds
 * leases and has not claimed, acked or extended one for SILENT_AFTER_SECONDS while another holder of
 * one of those groups claimed within a quarter of that time.
 */
export const SILENT_AFTER_SECONDS = 120;
