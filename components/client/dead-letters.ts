// Dead letters: the list, requeue and discard (and their dry runs), grouped by error.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import type { Answer } from './answer';

export type DeadLetterKind = 'requeue' | 'discard';

export type DeadLetterPage = Answer<'GET /api/v1/dlq'>;
export type DeadLetter = DeadLetterPage['messages'][number];

/** What names a dead letter to a requeue or discard. */
export type DeadLetterKey = { partitionId: string; consumerGroup: string; offset: number };
/** What an action acts on: dead letters by key, or every one a filter matches. */
export type DeadLetterTarget = { items: DeadLetterKey[] } | { filter: Record<string, string> };

/** GET /api/v1/dlq (the live query's path). */
export const deadLettersPath = (query: Record<string, string | undefined>) => withSearch('/api/v1/dlq', query);

/** GET /api/dashboard/dead-letter-errors (the live query's path). */
export const deadLetterErrorsPath = (query: Record<string, string | undefined>) =>
  withSearch('/api/dashboard/dead-letter-errors', query);

export const dryRunDeadLetters = (kind: DeadLetterKind, target: DeadLetterTarget, signal?: AbortSignal) =>
  api<Extract<Answer<'POST /api/v1/dlq/requeue'>, { dryRun: true }>>(
    'POST',
    `/api/v1/dlq/${kind}`,
    { ...target, dryRun: true },
    signal,
  );

export const actOnDeadLetters = (kind: DeadLetterKind, target: DeadLetterTarget, reason: string) =>
  api<Exclude<Answer<'POST /api/v1/dlq/requeue'> | Answer<'POST /api/v1/dlq/discard'>, { dryRun: true }>>(
    'POST',
    `/api/v1/dlq/${kind}`,
    { ...target, reason },
  );
