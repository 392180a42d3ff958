import { seek } from '@/lib/broker/consumer-groups';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (request, { params }: RouteContext<'/api/v1/consumer-groups/[group]/queues/[queue]/seek'>) => {
    const { group, queue } = await params;
    return json(await seek(group, queue, await readJson(request), actorOf(request)));
  },
);
