import { messageTraces } from '@/lib/broker/traces';
import { json, route } from '@/lib/http/route';

export const GET = route(async (_request, { params }: RouteContext<'/api/v1/traces/[partitionId]/[transactionId]'>) => {
  const { partitionId, transactionId } = await params;
  return json(await messageTraces(partitionId, transactionId));
});
