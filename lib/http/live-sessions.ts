import { createHash } from 'node:crypto';
import { authEnabled, principalOf, tokenOf } from './auth';

/**
 * Long-lived answers (the live event stream) that must end with their session: when the token
 * they were opened with expires, and when that session signs out here. A token is kept only as
 * its hash.
 */
type End = (reason: 'expired' | 'signed-out') => void;

const slot = globalThis as unknown as { __queenLiveSessions?: Map<string, Set<End>> };
const open = (slot.__queenLiveSessions ??= new Map());

const keyOf = (token: string) => createHash('sha256').update(token).digest('base64url');

// setTimeout holds at most 2^31 - 1 ms (24.8 days); a later expiry is waited for in steps
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `end` once, when the request's token expires or its session signs out; returns what
 * stops watching (the stream ended by itself). With auth off, nothing ends a session.
 */
export function endWithSession(request: Request, end: End): () => void {
  if (!authEnabled()) return () => {};
  let token: string | undefined;
  try {
    token = tokenOf(request);
  } catch {
    token = undefined;
  }
  const expiresAt = principalOf(request).expiresAt;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const key = token ? keyOf(token) : undefined;
  const stop = () => {
    done = true;
    clearTimeout(timer);
    if (key) {
      const set = open.get(key);
      set?.delete(finish);
      if (set?.size === 0) open.delete(key);
    }
  };
  const finish: End = (reason) => {
    if (done) return;
    stop();
    end(reason);
  };
  if (key) {
    let set = open.get(key);
    if (!set) open.set(key, (set = new Set()));
    set.add(finish);
  }
  if (expiresAt) {
    const at = Date.parse(expiresAt);
    const arm = () => {
      const left = at - Date.now();
      if (left <= 0) return finish('expired');
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      timer.unref();
    };
    arm();
  }
  return stop;
}

/** A sign-out: every stream this instance holds open with that token ends now. */
export function endSessionsOf(request: Request): number {
  let token: string | undefined;
  try {
    token = tokenOf(request);
  } catch {
    return 0;
  }
  if (!token) return 0;
  const set = open.get(keyOf(token));
  if (!set) return 0;
  const ends = [...set];
  for (const end of ends) end('signed-out');
  return ends.length;
}
