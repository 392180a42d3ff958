import { ackBatch } from '@/lib/broker/ack';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await ackBatch(await readJson(request))), {
  cancelled: 'ack failed',
});
