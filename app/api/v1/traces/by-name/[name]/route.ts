import { tracesByName } from '@/lib/broker/traces';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request, { params }: RouteContext<'/api/v1/traces/by-name/[name]'>) => {
  const { name } = await params;
  return json(await tracesByName(name, new URL(request.url).searchParams));
});
