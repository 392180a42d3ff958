import { connection } from 'next/server';
import { GroupsView } from '@/components/pages/groups-view';
import { listGroups } from '@/lib/dashboard/groups';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Consumer groups' };

export default async function GroupsPage({ searchParams }: PageProps<'/groups'>) {
  await connection();
  const search = await searchParams;
  const one = (k: string) => (typeof search[k] === 'string' ? (search[k] as string) : undefined);
  const filters = { group: one('group'), minutes: one('minutes') };
  let initial;
  try {
    initial = await listGroups(searchOf(filters));
  } catch {
    initial = await listGroups(searchOf({ group: filters.group })); // a mangled range still shows the groups
  }
  return <GroupsView initial={initial} filters={filters} />;
}
