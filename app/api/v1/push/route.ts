import { principalOf } from '@/lib/http/auth';
import { parsePushBody, prepareItems, push } from '@/lib/broker/push';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(
  async (request) => {
    const items = parsePushBody(await readJson(request));
    if (items.length === 0) return json([], 201);
    // with auth on, the token's subject; a producerSub in the body is never read
    return json(await push(prepareItems(items, principalOf(request).subject ?? null)), 201);
  },
  { cancelled: 'push failed' },
);
