// Dead letters: the list, requeue and discard (and their dry runs), grouped by error.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import type { Answer } from './answer';

export type DeadLetterKind = 'requeue' | 'discard';

/** GET /api/v1/dlq (the live query's path). */
export const deadLettersPath = (query: Record<string, string | undefined>) => withSearch('/api/v1/dlq', query);

/** GET /api/dashboard/dead-letter-errors (the live query's path). */
export const deadLetterErrorsPath = (query: Record<string, string | undefined>) =>
  withSearch('/api/dashboard/dead-letter-errors', query);

type Target =
  | { items: { partitionId: string; consumerGroup: string; offset: number }[] }
  | { filter: Record<string, string> };

export const dryRunDeadLetters = (kind: DeadLetterKind, target: Target, signal?: AbortSignal) =>
  api<Extract<Answer<'POST /api/v1/dlq/requeue'>, { dryRun: true }>>(
    'POST',
    `/api/v1/dlq/${kind}`,
    { ...target, dryRun: true },
    signal,
  );

export const actOnDeadLetters = (kind: DeadLetterKind, target: Target, reason: string) =>
  api<Exclude<Answer<'POST /api/v1/dlq/requeue'> | Answer<'POST /api/v1/dlq/discard'>, { dryRun: true }>>(
    'POST',
    `/api/v1/dlq/${kind}`,
    { ...target, reason },
  );
