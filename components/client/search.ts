// GET /api/v1/search: what a pasted id is, and the console's queue-name suggestions.
import { api } from '../api';
import type { Answer } from './answer';

export type SearchAnswer = Answer<'GET /api/v1/search'>;

export const search = (q: string, signal?: AbortSignal) =>
  api<SearchAnswer>('GET', `/api/v1/search?${new URLSearchParams({ q })}`, undefined, signal);

export const searchQueues = (q: string, signal?: AbortSignal) =>
  api<SearchAnswer>('GET', `/api/v1/search?${new URLSearchParams({ kind: 'queue', q })}`, undefined, signal);
