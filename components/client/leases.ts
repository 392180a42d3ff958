// Leases: GET /api/v1/leases, the force releases and the extension.
import { withSearch } from '@/lib/dashboard/query-string';
import { api } from '../api';
import { type Answer, seg } from './answer';

export type LeaseList = Answer<'GET /api/v1/leases'>;
export type Lease = LeaseList['leases'][number];

/** GET /api/v1/leases with these filters (the live query's path). */
export const leasesPath = (filters: Record<string, string | undefined>) => withSearch('/api/v1/leases', filters);

export const listLeases = (filters: Record<string, string | undefined>, signal?: AbortSignal) =>
  api<LeaseList>('GET', leasesPath(filters), undefined, signal);

export const releaseLease = (leaseId: string, reason: string) =>
  api<Answer<'POST /api/v1/leases/[leaseId]/release'>>('POST', `/api/v1/leases/${seg(leaseId)}/release`, { reason });

export const releaseLeases = (leaseIds: string[], reason: string) =>
  api<Answer<'POST /api/v1/leases/release'>>('POST', '/api/v1/leases/release', { leaseIds, reason });

export const extendLease = (leaseId: string, seconds: number) =>
  api<Answer<'POST /api/v1/lease/[leaseId]/extend'>>('POST', `/api/v1/lease/${seg(leaseId)}/extend`, { seconds });
