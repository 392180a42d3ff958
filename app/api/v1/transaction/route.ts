import { principalOf } from '@/lib/http/auth';
import { runTransaction } from '@/lib/broker/transaction';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (request) => json(await runTransaction(await readJson(request), principalOf(request).subject ?? null)),
  { cancelled: 'transaction failed' },
);
