import { connection } from 'next/server';
import type { DeadLetterPage } from '@/components/client/dead-letters';
import { DeadLettersView } from '@/components/pages/dead-letters-view';
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
  let filterError: string | undefined;
  try {
    initial = plain(await listDeadLetters(searchOf(deadLetterQuery(filters)))) as DeadLetterPage;
  } catch (err) {
    // a mangled link: the page says what is wrong and lists nothing (the unfiltered list would mislead)
    filterError = (err as Error).message;
    initial = plain(await listDeadLetters(searchOf(deadLetterQuery({})))) as DeadLetterPage;
  }
  return <DeadLettersView initial={initial} filters={filters} filterError={filterError} />;
}
