import { parseQueuePageParams, queuePage } from '@/lib/dashboard/queue';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request, { params }: RouteContext<'/api/dashboard/queues/[queue]'>) =>
  json(await queuePage((await params).queue, parseQueuePageParams(new URL(request.url).searchParams))),
);
