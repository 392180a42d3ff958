// Messages: the browser's list, one message, its traces, deleting it.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import { type Answer, seg } from './answer';

export type MessageList = Answer<'GET /api/v1/messages'>;
export type MessageDetail = Answer<'GET /api/v1/messages/[partitionId]/[transactionId]'>;
export type MessageTraces = Answer<'GET /api/v1/traces/[partitionId]/[transactionId]'>;

/** GET /api/v1/messages (the live query's path). */
export const messagesPath = (query: Record<string, string | undefined>) => withSearch('/api/v1/messages', query);

/** GET /api/v1/messages/:partitionId/:transactionId (the live query's path). */
export const messagePath = (partitionId: string, transactionId: string) =>
  `/api/v1/messages/${seg(partitionId)}/${seg(transactionId)}`;

/** GET /api/v1/traces/:partitionId/:transactionId (the live query's path). */
export const tracesPath = (partitionId: string, transactionId: string) =>
  `/api/v1/traces/${seg(partitionId)}/${seg(transactionId)}`;

export const deleteMessage = (partitionId: string, transactionId: string, reason: string) =>
  api<Answer<'DELETE /api/v1/messages/[partitionId]/[transactionId]'>>(
    'DELETE',
    withSearch(messagePath(partitionId, transactionId), { reason }),
  );
