import { principalOf } from '@/lib/http/auth';
import { runCycle } from '@/lib/broker/streams/cycle';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (request) => json(await runCycle(await readJson(request), principalOf(request).subject ?? null)),
  { cancelled: 'cycle failed' },
);
