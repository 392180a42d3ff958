// Tokens for the auth tests, signed the way an identity provider would sign them.
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { Role } from '@/lib/http/access';

export const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'queen';

export interface Signer {
  alg: 'HS256' | 'RS256' | 'ES256';
  key: CryptoKey | Uint8Array;
  kid?: string;
}

export const hs256 = (secret = SECRET): Signer => ({ alg: 'HS256', key: new TextEncoder().encode(secret) });

export async function keyPair(alg: 'RS256' | 'ES256', kid?: string) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { signer: { alg, key: privateKey, kid } as Signer, pem: await exportSPKI(publicKey), jwk };
}

export interface Claims {
  sub?: string;
  role?: Role | string;
  roles?: string[];
  iss?: string;
  aud?: string;
  /** seconds from now; negative: already expired */
  expiresIn?: number;
}

export async function mint(signer: Signer, claims: Claims = {}): Promise<string> {
  const { sub = 'tester', role, roles, iss = ISSUER, aud = AUDIENCE, expiresIn = 600 } = claims;
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = {};
  if (role !== undefined) payload.role = role;
  if (roles !== undefined) payload.roles = roles;
  let jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: signer.alg, ...(signer.kid ? { kid: signer.kid } : {}) })
    .setIssuedAt(now - 5)
    .setIssuer(iss)
    .setAudience(aud)
    .setExpirationTime(now + expiresIn);
  if (sub) jwt = jwt.setSubject(sub);
  return jwt.sign(signer.key);
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
