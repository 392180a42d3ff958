import { listStreamingQueries } from '@/lib/dashboard/streams';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await listStreamingQueries()));
