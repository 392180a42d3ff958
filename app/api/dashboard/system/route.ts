import { systemFacts } from '@/lib/dashboard/system';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await systemFacts()));
