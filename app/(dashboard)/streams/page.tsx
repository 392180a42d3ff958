import { connection } from 'next/server';
import { StreamsView } from '@/components/pages/streams-view';
import { searchOf } from '@/lib/dashboard/query-string';
import { listStreamingQueries, type StreamingQueryList } from '@/lib/dashboard/streams';

export const metadata = { title: 'Streaming queries' };

export default async function StreamsPage({ searchParams }: PageProps<'/streams'>) {
  await connection();
  const page = ((await searchParams) as Record<string, string | undefined>).page || undefined;
  let initial: StreamingQueryList;
  try {
    initial = await listStreamingQueries(searchOf({ page }));
  } catch {
    initial = await listStreamingQueries(); // a mangled link still shows the first page
  }
  return <StreamsView initial={initial} page={page} />;
}
