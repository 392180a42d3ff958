import { deleteQueue, getQueue } from '@/lib/broker/queues';
import { actorOf } from '@/lib/http/actor';
import { json, route } from '@/lib/http/route';

type Context = RouteContext<'/api/v1/resources/queues/[queue]'>;

export const GET = route(async (_request, { params }: Context) => json(await getQueue((await params).queue)));

export const DELETE = route(async (request, { params }: Context) =>
  json(await deleteQueue((await params).queue, actorOf(request), new URL(request.url).searchParams)),
);
