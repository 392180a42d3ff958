import { listGroups } from '@/lib/dashboard/groups';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listGroups(new URL(request.url).searchParams)));
