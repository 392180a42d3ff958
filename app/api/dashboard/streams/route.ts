import { listStreamingQueries } from '@/lib/dashboard/streams';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listStreamingQueries(new URL(request.url).searchParams)));
