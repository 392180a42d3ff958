import { recordTrace } from '@/lib/broker/traces';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => json(await recordTrace(await readJson(request))));
