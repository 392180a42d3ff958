/**
 * Who performed an operator action, for the audit log. Until authentication is on this is what
 * the caller says (`X-Queen-Actor`, set by the dashboard) or, failing that, its address.
 */
export function actorOf(request: Request): string {
  const h = request.headers;
  const said = h.get('x-queen-actor');
  if (said) return said.slice(0, 200);
  return `anonymous@${h.get('x-forwarded-for')?.split(',')[0]?.trim() ?? 'unknown'}`;
}
