import { releaseLeases } from '@/lib/broker/leases';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await releaseLeases(await readJson(request), actorOf(request))));
