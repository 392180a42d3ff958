// Runs before every dashboard page (not the API nor /streams/: route() guards each route handler, see
// lib/http/access.ts). Three jobs: refusing a Host that is not this server's (DNS rebinding,
// lib/http/host.ts); a fresh CSP nonce per page, which Next.js puts on its own scripts; and, with
// auth on, sending a visitor without a valid read-only token to /sign-in.
import { NextResponse, type NextRequest } from 'next/server';
import { HttpError } from '@/lib/broker/errors';
import { allows } from '@/lib/http/access';
import { SESSION_COOKIE, authEnabled, verifyToken } from '@/lib/http/auth';
import { errorAnswer } from '@/lib/http/errors';
import { refuseForeignHost } from '@/lib/http/host';

export async function proxy(request: NextRequest) {
  const path = request.nextUrl.pathname;
  try {
    refuseForeignHost(request);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    const answer = errorAnswer(err);
    return NextResponse.json(answer.body, { status: answer.status, headers: answer.headers });
  }
  if (authEnabled() && path !== '/sign-in' && !(await mayRead(request.cookies.get(SESSION_COOKIE)?.value))) {
    const to = new URL('/sign-in', request.url);
    to.searchParams.set('next', path + request.nextUrl.search);
    return NextResponse.redirect(to, 303);
  }
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64');
  const policy = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    // React writes style attributes (bars, widths); no stylesheet comes from elsewhere
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('content-security-policy', policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('content-security-policy', policy);
  return response;
}

async function mayRead(token: string | undefined): Promise<boolean> {
  if (!token) return false;
  try {
    return allows((await verifyToken(token)).role, 'read-only');
  } catch {
    return false;
  }
}

// Prefetches too: a page's RSC payload carries the same data as the page.
export const config = {
  matcher: '/((?!api/|streams/|health|ready|metrics|_next/static|_next/image|icon.svg|favicon.ico).*)',
};
