import { resetQueryState } from '@/lib/broker/streams/reset';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request, { params }: RouteContext<'/api/v1/streams/queries/[queryId]/reset'>) =>
  json(await resetQueryState((await params).queryId, await readJson(request), actorOf(request))),
);
