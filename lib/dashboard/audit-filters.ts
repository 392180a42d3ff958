/** The audit page's filters (GET /api/v1/audit's): `queue`, `partitionId` and `group` match the entries' details; `before` is the page (the entries older than that one). */
export const AUDIT_FILTERS = ['target', 'action', 'queue', 'partitionId', 'group', 'before'] as const;
export type AuditFilters = Partial<Record<(typeof AUDIT_FILTERS)[number], string>>;
