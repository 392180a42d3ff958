import { parsePushBody, prepareItems, push } from '@/lib/broker/push';
import { json, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => {
  const items = parsePushBody(await readJson(request));
  if (items.length === 0) return json([], 201);
  return json(await push(prepareItems(items, null)), 201);
}, { cancelled: 'push failed' });
