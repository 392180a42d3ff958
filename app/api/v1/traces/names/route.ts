import { traceNames } from '@/lib/broker/traces';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await traceNames(new URL(request.url).searchParams)));
