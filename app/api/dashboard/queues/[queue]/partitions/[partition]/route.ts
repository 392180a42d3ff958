import { browsePartition, parseBrowseQuery } from '@/lib/dashboard/browse';
import { json, route } from '@/lib/http/route';

export const GET = route(
  async (request, { params }: RouteContext<'/api/dashboard/queues/[queue]/partitions/[partition]'>) => {
    const { queue, partition } = await params;
    return json(await browsePartition(queue, partition, parseBrowseQuery(new URL(request.url).searchParams)));
  },
);
