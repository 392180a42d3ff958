import { popTarget } from '@/lib/dashboard/pop-target';
import { json, route } from '@/lib/http/route';

/** The console asks before a pop that would create a queue or a group. */
export const GET = route(async (request) => json(await popTarget(new URL(request.url).searchParams)));
