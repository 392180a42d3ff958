// Where the dashboard may send a browser after sign-in: a path of this app, nothing else.

const BASE = 'http://dashboard.invalid';

/**
 * `next` parsed as a URL relative to this app, as a browser would: accepted only when it stays on
 * the same origin and is a dashboard path (not the API, not Next's own assets); the answer is the
 * normalized path, query and fragment. Anything else (`//evil.example`, `/\tevil.example`, a
 * scheme, a path that normalizes to `//…`) gives `/`. String checks miss what the URL parser
 * strips (tabs, newlines) or reads as a slash (a backslash).
 */
export function appPath(next: unknown): string {
  if (typeof next !== 'string' || next === '') return '/';
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return '/';
  }
  if (url.origin !== BASE || url.username || url.password) return '/';
  if (url.pathname.startsWith('//') || /^\/(api|_next)(\/|$)/.test(url.pathname)) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  // the path as the browser will read it must land here too
  return new URL(path, BASE).origin === BASE ? path : '/';
}
