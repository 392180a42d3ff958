import { requeueDeadLetters } from '@/lib/broker/dead-letter-actions';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await requeueDeadLetters(await readJson(request), actorOf(request))));
