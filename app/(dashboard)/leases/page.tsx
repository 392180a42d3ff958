import { connection } from 'next/server';
import { LeasesView } from '@/components/pages/leases-view';
import { LEASE_FILTERS, LEASES_PAGE_SIZE } from '@/lib/dashboard/lease-filters';
import { searchOf } from '@/lib/dashboard/query-string';
import { listLeases, type LeaseList } from '@/lib/broker/leases';

export const metadata = { title: 'Leases' };

export default async function LeasesPage({ searchParams }: PageProps<'/leases'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = Object.fromEntries(LEASE_FILTERS.map((k) => [k, search[k] || undefined]));
  const query = (f: Record<string, string | undefined>) => searchOf({ ...f, pageSize: String(LEASES_PAGE_SIZE) });
  let initial: LeaseList;
  let filterError: string | undefined;
  try {
    initial = await listLeases(query(filters));
  } catch (err) {
    // a mangled link: the page says what is wrong and lists nothing (the unfiltered list would mislead)
    filterError = (err as Error).message;
    initial = await listLeases(query({}));
  }
  return <LeasesView initial={initial} filters={filters} filterError={filterError} />;
}
