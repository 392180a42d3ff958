import { findById } from '@/lib/dashboard/find-by-id';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await findById(new URL(request.url).searchParams)));
