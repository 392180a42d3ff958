import { listDeadLetters } from '@/lib/broker/dead-letters';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listDeadLetters(new URL(request.url).searchParams)));
