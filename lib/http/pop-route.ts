import { pop, type PopTarget } from '@/lib/broker/pop';
import { parsePopQuery, requireDiscoveryScope } from '@/lib/broker/pop-params';
import { holderClients } from '@/lib/broker/holder-clients';
import { pathName } from '@/lib/broker/validate';
import { authEnabled, principalOf } from './auth';
import { clientAddress } from './request-log';
import { rawJson, route } from './route';

/** Who holds a lease, for operators: the consumer's own name if it sends one, else its address and agent. */
function holderOf(request: Request): string {
  const h = request.headers;
  const named = h.get('x-queen-consumer');
  if (named) return named.slice(0, 200);
  const address = h.get('x-forwarded-for')?.split(',')[0]?.trim() ?? h.get('x-real-ip') ?? 'unknown';
  return `${address} ${h.get('user-agent') ?? ''}`.trim().slice(0, 200);
}

/** The address a pop came from: the proxy's word (X-Forwarded-For) if any, else the connection's. */
function addressOf(request: Request): string | null {
  return request.headers.get('x-forwarded-for')?.split(',')[0]?.trim().slice(0, 100) || clientAddress(request) || null;
}

/** The three pop routes share everything but how they name their target. */
export function popRoute<C>(targetOf: (context: C) => Promise<PopTarget>) {
  return route<C>(
    async (request, context) => {
      const started = performance.now();
      const params = parsePopQuery(new URL(request.url).searchParams);
      const target = await targetOf(context);
      if (target.queue !== undefined) pathName(target.queue, 'queue');
      if (target.partition !== undefined) pathName(target.partition, 'partition');
      if (target.queue === undefined) requireDiscoveryScope(params);
      // the holder is the consumer's word; with auth on the lease also records who signed the token
      const subject = authEnabled() ? (principalOf(request).subject ?? null) : null;
      const holder = holderOf(request);
      const outcome = await pop(target, params, holder, () => request.signal, subject);
      holderClients.record(
        holder,
        addressOf(request),
        request.headers.get('user-agent')?.slice(0, 200) ?? null,
        outcome.kind !== 'messages',
      );
      // How long the server took (a long poll's wait included), for operators and the bench.
      if (outcome.kind === 'messages')
        return rawJson(outcome.body, 200, { 'server-timing': `pop;dur=${(performance.now() - started).toFixed(1)}` });
      // The spec's empty pop is a bare 204; the header only tells an operator why.
      return new Response(null, { status: 204, headers: { 'x-queen-empty': outcome.reason } });
    },
    { cancelled: 'pop failed' },
  );
}
