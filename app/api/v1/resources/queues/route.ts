import { listQueues } from '@/lib/broker/queues';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json({ queues: await listQueues() }));
