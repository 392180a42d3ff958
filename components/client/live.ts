// The live consume view: the event stream, the claims before it opened, per-partition counts.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import type { Answer } from './answer';

type Filters = { queue?: string; group?: string };

/** GET /api/v1/events: an EventSource's URL. */
export const eventsUrl = (f: Filters) => withSearch('/api/v1/events', { queue: f.queue, group: f.group });

export const recentClaims = (f: Filters) =>
  api<Answer<'GET /api/dashboard/recent-claims'>>(
    'GET',
    withSearch('/api/dashboard/recent-claims', { queue: f.queue, group: f.group }),
  );

export const activity = (query: { since: string; partitions: string; group?: string }, signal?: AbortSignal) =>
  api<Answer<'GET /api/dashboard/activity'>>('GET', withSearch('/api/dashboard/activity', query), undefined, signal);
