import { setAside } from '@/lib/broker/set-aside';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (request, { params }: RouteContext<'/api/v1/cursors/[partitionId]/[group]/set-aside'>) => {
    const { partitionId, group } = await params;
    return json(await setAside(partitionId, group, await readJson(request), actorOf(request)));
  },
);
