// A (partition, group) cursor: pause and resume, and setting a message aside.
import { api } from '../api';
import { type Answer, seg } from './answer';

const cursor = (partitionId: string, group: string) => `/api/v1/cursors/${seg(partitionId)}/${seg(group)}`;

export const pauseCursor = (
  partitionId: string,
  group: string,
  body: { paused: boolean; reason: string; until?: string | null },
) =>
  api<Answer<'POST /api/v1/cursors/[partitionId]/[group]/pause'>>('POST', `${cursor(partitionId, group)}/pause`, body);

export const setAside = (
  partitionId: string,
  group: string,
  body: {
    action: 'dead-letter' | 'skip';
    reason: string;
    leaseId?: string | null;
    hold?: boolean;
    transactionId?: string;
  },
) =>
  api<Answer<'POST /api/v1/cursors/[partitionId]/[group]/set-aside'>>(
    'POST',
    `${cursor(partitionId, group)}/set-aside`,
    body,
  );
