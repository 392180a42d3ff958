import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { config } from '@/lib/config.mjs';
import { HttpError } from '@/lib/broker/errors';
import { ROLES, allows, type Level, type Role } from './access';
import { RETRY_AFTER } from './errors';

/** Who made a request: the token's subject and its highest role (with auth off: anonymous admin). */
export interface Principal {
  subject: string | undefined;
  role: Role | undefined;
  expiresAt?: string;
}

/** The dashboard keeps the signed-in token here (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'queen_session';

const ANONYMOUS_ADMIN: Principal = { subject: undefined, role: 'admin' };
const NOBODY: Principal = { subject: undefined, role: undefined };
const principals = new WeakMap<Request, Principal>();

/**
 * The principal route() established for this request. With auth on, a request it established none
 * for (a public route's) is nobody: never the anonymous admin of auth off.
 */
export function principalOf(request: Request): Principal {
  return principals.get(request) ?? (authEnabled() ? NOBODY : ANONYMOUS_ADMIN);
}

export const authEnabled = () => config().auth.enabled;

const unauthorized = (message: string) =>
  new HttpError(401, message, undefined, {
    'www-authenticate': `Bearer error="invalid_token", error_description="${message.replace(/"/g, "'")}"`,
  });

/**
 * Checks the request's token against `level` and remembers who it was: 401 without a usable
 * token, 403 when the token's role is below the level. With auth off everyone is admin.
 */
export async function authorize(request: Request, level: Level): Promise<Principal> {
  if (!authEnabled()) return ANONYMOUS_ADMIN;
  if (level === 'public') return NOBODY;
  const token = tokenOf(request);
  if (!token) throw unauthorized('authentication required: send Authorization: Bearer <token>');
  const principal = await verifyToken(token);
  if (!allows(principal.role, level)) {
    throw new HttpError(403, `this needs the ${level} role; the token has ${principal.role ?? 'no known role'}`);
  }
  principals.set(request, principal);
  return principal;
}

/** The request carries an Authorization header (which a browser never adds by itself). */
export const hasBearerToken = (request: Request) => request.headers.get('authorization') !== null;

/** The bearer token of the Authorization header, else the dashboard's session cookie. */
export function tokenOf(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (header !== null) {
    const m = /^Bearer +([^ ]+) *$/i.exec(header);
    if (!m) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
    return m[1];
  }
  return cookieOf(request, SESSION_COOKIE);
}

function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

let jwks: JWTVerifyGetKey | undefined;
// A token with an unknown key id refetches the JWKS (key rotation), at most once per this long.
const JWKS_COOLDOWN_MS = 5000;

/** The key for a token's algorithm: HS256 with the secret, RS256/ES256 with the public key or the JWKS. */
const keyFor: JWTVerifyGetKey = async (header, token) => {
  const auth = config().auth;
  if (header.alg === 'HS256' && auth.secret) return auth.secret;
  if (header.alg === auth.publicKeyAlgorithm && auth.publicKey) return auth.publicKey;
  if ((header.alg === 'RS256' || header.alg === 'ES256') && auth.jwksUrl) {
    jwks ??= createRemoteJWKSet(new URL(auth.jwksUrl), {
      cacheMaxAge: 10 * 60_000,
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: 5000,
    });
    return jwks(header, token);
  }
  throw unauthorized(`tokens signed with ${header.alg ?? 'no algorithm'} are not accepted here`);
};

/** The furthest expiry a token may name. */
const MAX_TOKEN_LIFETIME_SECONDS = 10 * 365.25 * 86_400;

/** Verifies signature, expiry, issuer and audience; every failure is a 401 that says which. */
export async function verifyToken(token: string): Promise<Principal> {
  const auth = config().auth;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyFor, {
      algorithms: ['HS256', 'RS256', 'ES256'],
      issuer: auth.issuer,
      audience: auth.audience,
      clockTolerance: auth.clockToleranceSeconds,
      requiredClaims: auth.allowNoExp ? [] : ['exp'],
    }));
  } catch (err) {
    throw tokenError(err);
  }
  // an exp in milliseconds, or 1e20, would sign in for millennia (and overflow a date)
  if (payload.exp !== undefined && payload.exp > Date.now() / 1000 + MAX_TOKEN_LIFETIME_SECONDS) {
    throw unauthorized(
      'the token expires more than 10 years from now: exp must be in seconds since 1970 (JWT_ALLOW_NO_EXP=true admits tokens without exp)',
    );
  }
  const subject = payload.sub;
  if (typeof subject !== 'string' || subject === '' || subject.length > 200 || /[\u0000-\u001f]/.test(subject)) {
    throw unauthorized('the token needs a sub claim (1 to 200 characters, no control characters)');
  }
  return {
    subject,
    role: roleOf(payload),
    expiresAt: payload.exp ? new Date(payload.exp * 1000).toISOString() : undefined,
  };
}

/** The highest known role in the `role` claim or the `roles` array; unknown names are ignored. */
export function roleOf(payload: JWTPayload): Role | undefined {
  const claimed = [payload.role, payload.roles].flat().filter((r): r is string => typeof r === 'string');
  let best = -1;
  for (const r of claimed) best = Math.max(best, ROLES.indexOf(r as Role));
  return best < 0 ? undefined : ROLES[best];
}

function tokenError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { code?: string; claim?: string; reason?: string; message?: string };
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return unauthorized('token expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.claim === 'exp' && e.reason === 'missing')
        return unauthorized(
          'the token has no exp claim: tokens that never expire are refused (JWT_ALLOW_NO_EXP=true allows them)',
        );
      return unauthorized(`token rejected: ${e.message}`);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return unauthorized('token signature does not verify');
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return unauthorized('token algorithm not accepted (HS256, RS256 or ES256)');
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthorized('no key of the JWKS matches the token');
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JWKS_INVALID':
      return new HttpError(503, 'the signing keys (JWT_JWKS_URL) could not be fetched', undefined, RETRY_AFTER);
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JWK_INVALID':
      return unauthorized('malformed token');
    default:
      // a JWKS endpoint that cannot be reached (fetch failed) or answers other than 200
      if (config().auth.jwksUrl && (e.code === undefined || e.code === 'ERR_JOSE_GENERIC')) {
        return new HttpError(503, 'the signing keys (JWT_JWKS_URL) could not be fetched', undefined, RETRY_AFTER);
      }
      return unauthorized('malformed token');
  }
}
