import { connection } from 'next/server';
import { notFound } from 'next/navigation';
import { PartitionView } from '@/components/pages/partition-view';
import { browsePartition, parseBrowseQuery } from '@/lib/dashboard/browse';
import { HttpError } from '@/lib/broker/errors';

export async function generateMetadata({ params }: PageProps<'/queues/[queue]/partitions/[partition]'>) {
  const { queue, partition } = await params;
  return { title: `Partition ${decodeURIComponent(partition)} · Queue ${decodeURIComponent(queue)}` };
}

export default async function PartitionPage({
  params,
  searchParams,
}: PageProps<'/queues/[queue]/partitions/[partition]'>) {
  await connection();
  const { queue, partition } = await params;
  const search = (await searchParams) as Record<string, string | undefined>;
  let query;
  try {
    query = parseBrowseQuery(search);
  } catch {
    query = parseBrowseQuery({}); // a mangled link still shows the partition
  }
  try {
    return (
      <PartitionView initial={await browsePartition(decodeURIComponent(queue), decodeURIComponent(partition), query)} />
    );
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) notFound();
    throw err;
  }
}
