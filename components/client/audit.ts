// GET /api/v1/audit: the audit log.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import type { Answer } from './answer';

export type AuditPage = Answer<'GET /api/v1/audit'>;
export type AuditEntry = AuditPage['entries'][number];

/** The live query's path. */
export const auditPath = (filters: Record<string, string | undefined>) => withSearch('/api/v1/audit', filters);

/** `query`: an encoded query string of filters. */
export const readAudit = (query: string) => api<AuditPage>('GET', `/api/v1/audit?${query}`);
