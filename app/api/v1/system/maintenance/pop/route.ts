import { getPopMaintenance, setPopMaintenance } from '@/lib/broker/pop-maintenance';
import { actorOf } from '@/lib/http/actor';
import { json, readJson, route } from '@/lib/http/route';

export const GET = route(async () => json(await getPopMaintenance()));

export const POST = route(async (request) => json(await setPopMaintenance(await readJson(request), actorOf(request))));
