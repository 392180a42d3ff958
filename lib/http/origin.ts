import { HttpError } from '@/lib/broker/errors';

/**
 * Refuses a request a browser sent on behalf of another site: `Sec-Fetch-Site` other than
 * same-origin or none (a typed URL), or an `Origin` that is not this server's own. Pops and the
 * event stream are GETs that take leases or stream data, so every non-public route is guarded, not
 * only POSTs. Clients outside a browser send neither header and pass.
 */
export function refuseCrossSite(request: Request): void {
  const h = request.headers;
  const site = h.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    throw new HttpError(403, `cross-site request refused (Sec-Fetch-Site: ${site.slice(0, 40)})`);
  }
  const origin = h.get('origin');
  if (origin === null) return;
  const own = h.get('x-forwarded-host') ?? h.get('host');
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined; // "null" (sandboxed frames, file://) or garbage
  }
  if (!host || host !== own) throw new HttpError(403, `cross-origin request refused (Origin: ${origin.slice(0, 100)})`);
}
