import { registerQuery } from '@/lib/broker/streams/register';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await registerQuery(await readJson(request))), {
  cancelled: 'register failed',
});
