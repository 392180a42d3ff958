import { listConsumers } from '@/lib/dashboard/consumers';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await listConsumers(new URL(request.url).searchParams)));
