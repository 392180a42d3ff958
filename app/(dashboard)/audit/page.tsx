import { connection } from 'next/server';
import type { AuditPage } from '@/components/client/audit';
import { AuditView } from '@/components/pages/audit-view';
import { AUDIT_FILTERS, type AuditFilters } from '@/lib/dashboard/audit-filters';
import { listAudit } from '@/lib/broker/audit';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Audit log' };

export default async function AuditLogPage({ searchParams }: PageProps<'/audit'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters: AuditFilters = Object.fromEntries(AUDIT_FILTERS.map((k) => [k, search[k] || undefined]));
  let initial;
  let filterError: string | undefined;
  try {
    initial = await listAudit(searchOf(filters));
  } catch (err) {
    filterError = (err as Error).message; // a mangled filter: its error, and no list
    initial = { entries: [], next: null };
  }
  return <AuditView initial={initial as unknown as AuditPage} filters={filters} filterError={filterError} />;
}
