import { openApiDocument } from '@/lib/http/openapi';
import { json, route } from '@/lib/http/route';

/** The OpenAPI 3.1 description of every route (lib/http/openapi.ts), public like /health. */
export const GET = route(async () => json(openApiDocument()));
