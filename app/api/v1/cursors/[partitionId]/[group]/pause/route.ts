import { setPause } from '@/lib/broker/pause';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request, { params }: RouteContext<'/api/v1/cursors/[partitionId]/[group]/pause'>) => {
  const { partitionId, group } = await params;
  return json(await setPause(partitionId, group, await readJson(request), actorOf(request)));
});
