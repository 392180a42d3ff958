import { previewPop } from '@/lib/broker/pop';
import { parsePopQuery, requireDiscoveryScope } from '@/lib/broker/pop-params';
import { dryRunWhy } from '@/lib/dashboard/dry-run-why';
import { json, route } from '@/lib/http/route';

/** The console's dry run: what a pop with these parameters would claim now, claiming nothing. */
export const GET = route(async (request) => {
  const search = new URL(request.url).searchParams;
  const params = parsePopQuery(search);
  const queue = search.get('queue') || undefined;
  const partition = (queue && search.get('partition')) || undefined;
  if (!queue) requireDiscoveryScope(params);
  const outcome = await previewPop({ queue, partition }, params, 'dry run');
  if (outcome.kind === 'messages') return json({ status: 200, empty: null, body: JSON.parse(outcome.body) });
  // an operator's question, not a consumer's: the leases behind a `leased`, a misspelt name behind an `idle`
  const why =
    outcome.reason === 'idle' || outcome.reason === 'leased'
      ? await dryRunWhy(queue, partition, params.consumerGroup)
      : null;
  return json({ status: 204, empty: outcome.reason, body: null, why });
});
