import { listAudit } from '@/lib/broker/audit';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listAudit(new URL(request.url).searchParams)));
