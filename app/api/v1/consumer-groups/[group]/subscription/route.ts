import { setSubscription } from '@/lib/broker/consumer-groups';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request, { params }: RouteContext<'/api/v1/consumer-groups/[group]/subscription'>) =>
  json(await setSubscription((await params).group, await readJson(request), actorOf(request))),
);
