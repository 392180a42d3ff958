import { getMessage } from '@/lib/broker/messages';
import { json, route } from '@/lib/http/route';

export const GET = route(async (_request, { params }: RouteContext<'/api/v1/messages/[partitionId]/[transactionId]'>) => {
  const { partitionId, transactionId } = await params;
  return json(await getMessage(partitionId, transactionId));
});
