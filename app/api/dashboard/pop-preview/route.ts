import { previewPop } from '@/lib/broker/pop';
import { parsePopQuery, requireDiscoveryScope } from '@/lib/broker/pop-params';
import { json, route } from '@/lib/http/route';

/** The console's dry run: what a pop with these parameters would claim now, claiming nothing. */
export const GET = route(async (request) => {
  const search = new URL(request.url).searchParams;
  const params = parsePopQuery(search);
  const queue = search.get('queue') || undefined;
  const partition = (queue && search.get('partition')) || undefined;
  if (!queue) requireDiscoveryScope(params);
  const outcome = await previewPop({ queue, partition }, params, 'dry run');
  return json(outcome.kind === 'messages'
    ? { status: 200, empty: null, body: JSON.parse(outcome.body) }
    : { status: 204, empty: outcome.reason, body: null });
});
