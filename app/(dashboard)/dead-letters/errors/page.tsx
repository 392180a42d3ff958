import { connection } from 'next/server';
import { DeadLetterErrorsView } from '@/components/pages/dead-letter-errors-view';
import { deadLetterErrors } from '@/lib/dashboard/dead-letter-errors';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Dead letters by error' };

export default async function DeadLetterErrorsPage({ searchParams }: PageProps<'/dead-letters/errors'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = {
    queue: search.queue || undefined,
    group: search.group || undefined,
    page: search.page || undefined,
  };
  let initial;
  try {
    initial = await deadLetterErrors(
      searchOf({ queue: filters.queue, consumerGroup: filters.group, page: filters.page }),
    );
  } catch {
    initial = await deadLetterErrors(searchOf({})); // a mangled link still shows the groups
  }
  return <DeadLetterErrorsView initial={initial} filters={filters} />;
}
