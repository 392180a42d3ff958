import { configureQueue } from '@/lib/broker/configure';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await configureQueue(await readJson(request), actorOf(request))));
