// The broker as a whole: the overview, the System page, pop maintenance.
import { api } from '../api';
import type { Answer } from './answer';

/** The live queries' paths. */
export const OVERVIEW_PATH = '/api/dashboard/overview';
export const SYSTEM_PATH = '/api/dashboard/system';
export const MAINTENANCE_PATH = '/api/dashboard/maintenance';
/** Where the pages read from: the primary, or a replica and how far behind it is. */
export const REPLICA_PATH = '/api/dashboard/replica';

export const setPopMaintenance = (enabled: boolean, reason: string) =>
  api<Answer<'POST /api/v1/system/maintenance/pop'>>('POST', '/api/v1/system/maintenance/pop', { enabled, reason });
