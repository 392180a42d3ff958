import { HttpError } from '@/lib/broker/errors';
import { config, hostnameOf } from '@/lib/config.mjs';
import { authEnabled, hasBearerToken } from './auth';

const HOST_AND_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]{1,253})(:\d{1,5})?$/i;

/**
 * Whether a Host (or X-Forwarded-Host) value names this server: a loopback name or address, any
 * `*.localhost` (browsers resolve those to loopback themselves), the listen address, or a name of
 * ALLOWED_HOSTS.
 */
export function hostAllowed(value: string): boolean {
  // a name (or bracketed IPv6 address) and a port, nothing else: `h/health#` is no host
  if (!HOST_AND_PORT.test(value.trim())) return false;
  const allowed = config().allowedHosts;
  if (allowed.any) return true;
  const name = hostnameOf(value);
  if (name === '') return false;
  if (allowed.names.includes(name) || name.endsWith('.localhost')) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name); // all of 127/8 is loopback
}

/**
 * DNS rebinding: a page on evil.example whose name then resolves to 127.0.0.1 talks to this server
 * as its own origin (Origin and Host both evil.example, so the cross-site guard passes). Only the
 * Host tells: a request must name this server. With auth off every request is checked; with auth
 * on, those the browser authenticates by itself (the session cookie), not those with a bearer
 * token, which no other site's page can have. X-Forwarded-Host is checked too when present: a
 * rebinding page can set it.
 */
export function refuseForeignHost(request: Request): void {
  if (authEnabled() && (hasBearerToken(request) || !request.headers.get('cookie')?.includes('queen_session='))) return;
  for (const name of ['host', 'x-forwarded-host']) {
    const value = request.headers.get(name);
    if (value === null && name === 'x-forwarded-host') continue;
    if (value === null || !value.split(',').every((v) => hostAllowed(v))) {
      const shown = (value ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 100);
      throw new HttpError(
        403,
        `host not allowed: ${shown || '(none)'} (a name this server is served under goes in ALLOWED_HOSTS)`,
      );
    }
  }
}
