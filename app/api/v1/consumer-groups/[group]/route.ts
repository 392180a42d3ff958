import { deleteConsumerGroup, getConsumerGroup } from '@/lib/broker/consumer-groups';
import { actorOf } from '@/lib/http/actor';
import { json, route } from '@/lib/http/route';

type Context = RouteContext<'/api/v1/consumer-groups/[group]'>;

export const GET = route(async (_request, { params }: Context) => json(await getConsumerGroup((await params).group)));

export const DELETE = route(async (request, { params }: Context) =>
  json(await deleteConsumerGroup((await params).group, null, new URL(request.url).searchParams, actorOf(request))),
);
