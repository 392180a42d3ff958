/**
 * Dead letters one requeue or discard may act on (lib/broker/dead-letter-actions.ts refuses more).
 * A module of its own, so that the dashboard's client code can show the limit without the server's.
 */
export const MAX_DEAD_LETTER_ITEMS = 1000;
