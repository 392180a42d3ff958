import { extendLease } from '@/lib/broker/leases';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request, { params }: RouteContext<'/api/v1/lease/[leaseId]/extend'>) =>
  json(await extendLease((await params).leaseId, await readJson(request))),
);
