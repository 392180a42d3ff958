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
  // a mangled range still shows the group; a mangled group (over 512 bytes, a U+0000) all groups
  const initial = await listGroups(searchOf(filters))
    .catch(() => listGroups(searchOf({ group: filters.group })))
    .catch(() => listGroups(searchOf({})));
  return <GroupsView initial={initial} filters={filters} />;
}
