import { deadLetterErrors } from '@/lib/dashboard/dead-letter-errors';
import { json, route } from '@/lib/http/route';

export const GET = route(async (request) => json(await deadLetterErrors(new URL(request.url).searchParams)));
