import { connection } from 'next/server';
import { LeasesView } from '@/components/pages/leases-view';
import { LEASE_FILTERS } from '@/lib/dashboard/lease-filters';
import { searchOf } from '@/lib/dashboard/search';
import { listLeases, type LeaseList } from '@/lib/broker/leases';

export default async function LeasesPage({ searchParams }: PageProps<'/leases'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = Object.fromEntries(LEASE_FILTERS.map((k) => [k, search[k] || undefined]));
  let initial: LeaseList;
  try {
    initial = await listLeases(searchOf(filters));
  } catch {
    initial = await listLeases(new URLSearchParams()); // a mangled link still shows every lease
  }
  return <LeasesView initial={initial} filters={filters} />;
}
