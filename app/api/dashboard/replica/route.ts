import { readSource } from '@/lib/dashboard/replica';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await readSource()));
