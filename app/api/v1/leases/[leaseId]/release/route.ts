import { releaseLease } from '@/lib/broker/leases';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request, { params }: RouteContext<'/api/v1/leases/[leaseId]/release'>) =>
  json(await releaseLease((await params).leaseId, await readJson(request), actorOf(request))),
);
