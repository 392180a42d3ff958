import { connection } from 'next/server';
import { ConsumersView } from '@/components/pages/consumers-view';
import { listConsumers } from '@/lib/dashboard/consumers';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Consumers' };

export default async function ConsumersPage({ searchParams }: PageProps<'/consumers'>) {
  await connection();
  const page = (await searchParams).page;
  const filters = { page: typeof page === 'string' ? page : undefined };
  let initial;
  try {
    initial = await listConsumers(searchOf(filters));
  } catch {
    initial = await listConsumers(searchOf({})); // a mangled link still shows the consumers
  }
  return <ConsumersView initial={initial} page={filters.page} />;
}
