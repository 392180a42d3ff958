import { recentClaims } from '@/lib/dashboard/activity';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await recentClaims(new URL(request.url).searchParams)));
