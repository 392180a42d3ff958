// Streaming queries: the Streams page and the operator's reset.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import { type Answer, seg } from './answer';

/** GET /api/dashboard/streams (the live query's path). */
export const streamsPath = (page: string | undefined) => withSearch('/api/dashboard/streams', { page });

export const resetStreamQuery = (queryId: string, reason: string) =>
  api<Answer<'POST /api/v1/streams/queries/[queryId]/reset'>>('POST', `/api/v1/streams/queries/${seg(queryId)}/reset`, {
    reason,
  });
