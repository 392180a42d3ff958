import { connection } from 'next/server';
import { StreamsView } from '@/components/pages/streams-view';
import { listStreamingQueries } from '@/lib/dashboard/streams';

export const metadata = { title: 'Streaming queries' };

export default async function StreamsPage() {
  await connection();
  return <StreamsView initial={await listStreamingQueries()} />;
}
