import { previewSeek } from '@/lib/broker/seek-preview';
import { json, route } from '@/lib/http/route';

export const GET = route(
  async (request, { params }: RouteContext<'/api/v1/consumer-groups/[group]/queues/[queue]/seek/preview'>) => {
    const { group, queue } = await params;
    return json(await previewSeek(group, queue, new URL(request.url).searchParams));
  },
);
