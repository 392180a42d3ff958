import { listMessages } from '@/lib/broker/list-messages';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listMessages(new URL(request.url).searchParams)));
