import { processFacts } from '@/lib/dashboard/process';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(processFacts()));
