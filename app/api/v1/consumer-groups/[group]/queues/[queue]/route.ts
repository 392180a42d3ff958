import { deleteConsumerGroup } from '@/lib/broker/consumer-groups';
import { actorOf } from '@/lib/http/actor';
import { json, route } from '@/lib/http/route';

export const DELETE = route(
  async (request, { params }: RouteContext<'/api/v1/consumer-groups/[group]/queues/[queue]'>) => {
    const { group, queue } = await params;
    return json(await deleteConsumerGroup(group, queue, new URL(request.url).searchParams, actorOf(request)));
  },
);
