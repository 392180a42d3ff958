import { listLeases } from '@/lib/broker/leases';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listLeases(new URL(request.url).searchParams)));
