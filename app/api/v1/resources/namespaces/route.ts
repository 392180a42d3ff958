import { listNamespaces } from '@/lib/broker/resources';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await listNamespaces()));
