import { registerQuery } from '@/lib/broker/streams/register';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await registerQuery(await readJson(request), actorOf(request))), {
  cancelled: 'register failed',
});
