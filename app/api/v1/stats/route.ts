import { trends } from '@/lib/dashboard/trends';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await trends(new URL(request.url).searchParams)));
