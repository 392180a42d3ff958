import { withSearch } from './search';

/** The Message page of one message. */
export const messageHref = (partitionId: string, transactionId: string) => `/messages/${partitionId}/${encodeURIComponent(transactionId)}`;

/** The Dead letters page, filtered (every filter optional). */
export const deadLettersHref = (filters: { queue?: string; group?: string }) => withSearch('/dead-letters', filters);

/** The message at an offset of a partition (a lease's span, a live event): redirects to its Message page. */
export const messageAtHref = (partitionId: string, offset: number) => `/messages/${partitionId}/at/${offset}`;
