import { seekPartition } from '@/lib/broker/consumer-groups';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (
    request,
    { params }: RouteContext<'/api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek'>,
  ) => {
    const { group, queue, partition } = await params;
    return json(await seekPartition(group, queue, partition, await readJson(request), actorOf(request)));
  },
);
