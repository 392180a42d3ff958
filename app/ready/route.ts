import { readiness } from '@/lib/broker/readiness';
import { RETRY_AFTER } from '@/lib/http/errors';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => {
  const state = await readiness();
  if (state.ready) return json({ status: 'ready', migrations: 'applied', database: 'connected' });
  return json({ status: 'not ready', reason: state.reason }, 503, RETRY_AFTER);
});
