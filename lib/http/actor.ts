import { authEnabled, principalOf } from './auth';

/**
 * Who performed an operator action, for the audit log: with auth on, the token's subject
 * (`X-Queen-Actor` is ignored); with auth off, what the caller says (`X-Queen-Actor`, set by the
 * dashboard) or, failing that, its address.
 */
export function actorOf(request: Request): string {
  if (authEnabled()) return principalOf(request).subject ?? 'unknown';
  const h = request.headers;
  const said = h.get('x-queen-actor');
  if (said) return said.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200) || 'anonymous';
  return `anonymous@${h.get('x-forwarded-for')?.split(',')[0]?.trim().slice(0, 100) ?? 'unknown'}`;
}
