import { laggingPartitions } from '@/lib/broker/lagging';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await laggingPartitions(new URL(request.url).searchParams)));
