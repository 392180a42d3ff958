import { z } from 'zod';
import { badRequest, HttpError } from '@/lib/broker/errors';
import { parseWith } from '@/lib/broker/validate';
import { SESSION_COOKIE, authEnabled, tokenOf, verifyToken, type Principal } from './auth';

/** What the dashboard knows about its user; with auth off, everyone is admin. */
export interface Session {
  authEnabled: boolean;
  signedIn: boolean;
  subject: string | null;
  role: Principal['role'] | null;
  expiresAt: string | null;
}

const describe = (p: Principal): Session => ({
  authEnabled: true,
  signedIn: true,
  subject: p.subject ?? null,
  role: p.role ?? null,
  expiresAt: p.expiresAt ?? null,
});

export async function sessionOf(request: Request): Promise<Session> {
  if (!authEnabled()) return { authEnabled: false, signedIn: false, subject: null, role: 'admin', expiresAt: null };
  const signedOut: Session = { authEnabled: true, signedIn: false, subject: null, role: null, expiresAt: null };
  let token: string | undefined;
  try {
    token = tokenOf(request);
    return token ? describe(await verifyToken(token)) : signedOut;
  } catch (err) {
    if (err instanceof HttpError && err.status === 401) return signedOut;
    throw err;
  }
}

// A cookie larger than this is dropped by browsers (4 KB with its attributes).
const MAX_TOKEN_CHARS = 3800;
export const signInBody = z.object({
  token: z
    .string()
    .trim()
    .min(1, 'paste a token')
    .max(MAX_TOKEN_CHARS, `must be at most ${MAX_TOKEN_CHARS} characters`)
    .regex(/^[\w-]+\.[\w-]+\.[\w-]+$/, 'is not a JWT (three base64url parts separated by dots)'),
});

export async function signIn(request: Request, body: unknown): Promise<{ session: Session; cookie: string }> {
  if (!authEnabled())
    throw badRequest('authentication is off (JWT_ENABLED is not true): there is nothing to sign in to');
  const { token } = parseWith(signInBody, body);
  const principal = await verifyToken(token);
  if (!principal.role)
    throw new HttpError(
      403,
      'the token has no role (read-only, read-write or admin): the dashboard needs read-only at least',
    );
  const maxAge = principal.expiresAt
    ? Math.max(0, Math.floor((Date.parse(principal.expiresAt) - Date.now()) / 1000))
    : undefined;
  return { session: describe(principal), cookie: cookie(request, token, maxAge) };
}

export function signOut(request: Request): string {
  return cookie(request, '', 0);
}

function cookie(request: Request, value: string, maxAge: number | undefined): string {
  // Secure only when the browser reached us over HTTPS (directly or through a proxy that says so).
  const https = new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  return [
    `${SESSION_COOKIE}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    maxAge !== undefined ? `Max-Age=${maxAge}` : '',
    https ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}
