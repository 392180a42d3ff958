import { deleteMessage } from '@/lib/broker/delete-message';
import { getMessage } from '@/lib/broker/messages';
import { actorOf } from '@/lib/http/actor';
import { json, route } from '@/lib/http/route';

type Context = RouteContext<'/api/v1/messages/[partitionId]/[transactionId]'>;

export const GET = route(async (_request, { params }: Context) => {
  const { partitionId, transactionId } = await params;
  return json(await getMessage(partitionId, transactionId));
});

export const DELETE = route(async (request, { params }: Context) => {
  const { partitionId, transactionId } = await params;
  return json(await deleteMessage(partitionId, transactionId, new URL(request.url).searchParams, actorOf(request)));
});
