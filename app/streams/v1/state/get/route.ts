import { getState } from '@/lib/broker/streams/state-get';
import { rawJson, readJson, route } from '@/lib/http/route';

export const POST = route(async (request) => rawJson(await getState(await readJson(request))), {
  cancelled: 'state get failed',
});
