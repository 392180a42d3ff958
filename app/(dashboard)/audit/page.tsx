import { connection } from 'next/server';
import { AuditView, type AuditEntry } from '@/components/pages/audit-view';
import { listAudit } from '@/lib/broker/audit';
import { searchOf } from '@/lib/dashboard/search';

export const metadata = { title: 'Audit log' };

export default async function AuditPage({ searchParams }: PageProps<'/audit'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = { target: search.target || undefined, action: search.action || undefined };
  const initial = await listAudit(searchOf(filters));
  return <AuditView initial={initial as unknown as { entries: AuditEntry[] }} filters={filters} />;
}
