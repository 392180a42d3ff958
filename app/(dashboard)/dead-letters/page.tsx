import { connection } from 'next/server';
import { DeadLettersView, type DeadLetterPage } from '@/components/pages/dead-letters-view';
import { listDeadLetters } from '@/lib/broker/dead-letters';
import { plain } from '@/lib/exact-json';
import { DEAD_LETTER_FILTERS, deadLetterQuery } from '@/lib/dashboard/dead-letter-filters';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Dead letters' };

export default async function DeadLettersPage({ searchParams }: PageProps<'/dead-letters'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = Object.fromEntries(DEAD_LETTER_FILTERS.map((k) => [k, search[k] || undefined]));
  let initial: DeadLetterPage;
  try {
    initial = plain(await listDeadLetters(searchOf(deadLetterQuery(filters)))) as DeadLetterPage;
  } catch {
    initial = plain(await listDeadLetters(searchOf(deadLetterQuery({})))) as DeadLetterPage; // a mangled link still shows the dead letters
  }
  return <DeadLettersView initial={initial} filters={filters} />;
}
