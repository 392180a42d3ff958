import { HttpError } from '@/lib/broker/errors';

/**
 * Refuses a request a browser sent on behalf of another site: `Sec-Fetch-Site` other than
 * same-origin or none (a typed URL), or an `Origin` (else a `Referer`) that is not this server's own. Pops and the
 * event stream are GETs that take leases or stream data, so every non-public route is guarded, not
 * only POSTs. Clients outside a browser send neither header and pass.
 */
export function refuseCrossSite(request: Request): void {
  const h = request.headers;
  const site = h.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    throw new HttpError(403, `cross-site request refused (Sec-Fetch-Site: ${site.slice(0, 40)})`);
  }
  // Without an Origin (old browsers on <img>, a GET navigation), a Referer names the page that sent it.
  const origin = h.get('origin');
  const referer = origin === null ? h.get('referer') : null;
  const sender = origin ?? referer;
  if (sender === null) return;
  const own = h.get('x-forwarded-host') ?? h.get('host');
  let host: string | undefined;
  try {
    host = new URL(sender).host;
  } catch {
    host = undefined; // "null" (sandboxed frames, file://) or garbage
  }
  if (!host || host !== own) {
    const said = origin !== null ? `Origin: ${origin.slice(0, 100)}` : `Referer: ${sender.slice(0, 100)}`;
    throw new HttpError(403, `cross-origin request refused (${said})`);
  }
}
