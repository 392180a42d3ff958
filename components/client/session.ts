// The dashboard's session (its cookie).
import { api } from '../api';
import type { Answer } from './answer';

export type Session = Answer<'GET /api/auth/session'>;

export const readSession = (signal?: AbortSignal) => api<Session>('GET', '/api/auth/session', undefined, signal);

/** Sign in with a JWT: null when signed in, else why not (the server's error, or the status). */
export async function signIn(token: string): Promise<string | null> {
  const res = await fetch('/api/auth/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (res.ok) return null;
  return ((await res.json().catch(() => null)) as { error?: string } | null)?.error ?? `HTTP ${res.status}`;
}

export const signOut = () => api<Answer<'DELETE /api/auth/session'>>('DELETE', '/api/auth/session');
