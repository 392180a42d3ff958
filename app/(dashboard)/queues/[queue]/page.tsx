import { connection } from 'next/server';
import { notFound } from 'next/navigation';
import { QueueView } from '@/components/pages/queue-view';
import { parseQueuePageParams, queuePage } from '@/lib/dashboard/queue';
import { HttpError } from '@/lib/broker/errors';

export async function generateMetadata({ params }: PageProps<'/queues/[queue]'>) {
  return { title: `Queue ${decodeURIComponent((await params).queue)}` };
}

export default async function QueuePageRoute({ params, searchParams }: PageProps<'/queues/[queue]'>) {
  await connection();
  const queue = decodeURIComponent((await params).queue);
  const search = (await searchParams) as Record<string, string | undefined>;
  let query;
  try {
    query = parseQueuePageParams(search);
  } catch {
    query = parseQueuePageParams({}); // a mangled link still shows the queue
  }
  try {
    return <QueueView initial={await queuePage(queue, query)} />;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) notFound();
    throw err;
  }
}
