import { HttpError, badRequest } from '@/lib/broker/errors';
import { config } from '@/lib/config.mjs';
import { exactOnlyIn, isExactNumber, parseExact, stringifyExact } from '@/lib/exact-json';
import type { AsyncLocalStorage } from 'node:async_hooks';
import { ruleOf } from './route-table';
import { authorize } from './auth';
import { errorAnswer } from './errors';
import { refuseForeignHost } from './host';
import { refuseCrossSite } from './origin';
import { failureOf, logRequest, type FailureContext } from './request-log';

/** A JSON answer; a RawJson in it (a stored payload's text) is written as it is. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return rawJson(stringifyExact(body), status, headers);
}

// The text of a JSON answer. The app's server (scripts/serve.mjs) writes it as it was made; the
// Response carries it as its body only when route() hands it to Next's handler (withBody): a body
// is a web stream, whose making cost ~25 µs of CPU an answer that nobody read.
const responseTexts = ((globalThis as { __queenResponseText?: WeakMap<Response, string> }).__queenResponseText ??=
  new WeakMap());

/**
 * A pre-serialized JSON body (the hot paths build their bodies as text). Answered through route(),
 * which gives the Response its body where one is read.
 */
export function rawJson(text: string, status = 200, headers: Record<string, string> = {}): Response {
  const response = new Response(null, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
  responseTexts.set(response, text);
  return response;
}

/** The answer with its JSON text as its body, for whatever reads the Response itself (Next's handler). */
function withBody(response: Response): Response {
  const text = responseTexts.get(response);
  if (text === undefined) return response;
  return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
}

interface RouteOptions {
  /** The `error` text when PostgreSQL cancels a statement of this route (statement timeout). */
  cancelled?: string;
}

// The route scripts/serve.mjs matched on the request's raw path: by request on its fast path, by
// async context through Next's handler. The access rule comes from it and from nothing else (never
// from request.url, whose parts a client could shape).
const dispatched = globalThis as {
  __queenDispatchedRoute?: WeakMap<Request, string>;
  __queenRoutedThroughNext?: AsyncLocalStorage<string>;
};
const routeOf = (request: Request): string | undefined =>
  dispatched.__queenDispatchedRoute?.get(request) ?? dispatched.__queenRoutedThroughNext?.getStore();
/** Whether scripts/serve.mjs's fast path dispatched the request, and so writes a JSON answer's text itself. */
const onFastPath = (request: Request): boolean => dispatched.__queenDispatchedRoute?.has(request) === true;

/**
 * Wraps a route handler: first the access table (lib/http/access.ts) for the route the server
 * matched (a route without an entry, or a request no dispatcher matched, is refused), the cross-site
 * guard and the token; then the one error envelope (lib/http/errors.ts). Every request then gets
 * its X-Request-Id, one log line and its place in the request histogram (lib/http/request-log.ts).
 */
export function route<C>(handler: (request: Request, context: C) => Promise<Response>, options: RouteOptions = {}) {
  return async (request: Request, context: C): Promise<Response> => {
    const started = performance.now();
    const pattern = routeOf(request);
    const rule = pattern === undefined ? undefined : ruleOf(request.method, pattern);
    let response: Response;
    let failure: FailureContext | undefined;
    let refusal: string | undefined;
    try {
      refuseForeignHost(request);
      if (pattern === undefined) throw new HttpError(403, "this request was not routed by the app's server");
      if (rule === undefined) throw new HttpError(403, 'this route has no entry in the access table');
      // a HEAD runs the GET (Next implements it so): only where the GET is a public read
      if (request.method === 'HEAD' && rule.level !== 'public')
        throw new HttpError(
          405,
          'method not allowed (allowed: GET): HEAD is answered only on public reads',
          undefined,
          {
            allow: 'GET',
          },
        );
      if (MAY_HOLD_NUL.test(request.url)) refuseNul(new URL(request.url));
      // public reads stay reachable from anywhere (/health); everything else only from this origin
      if (rule.level !== 'public' || (request.method !== 'GET' && request.method !== 'HEAD')) refuseCrossSite(request);
      await authorize(request, rule.level);
      response = await handler(request, context);
    } catch (err) {
      const answer = errorAnswer(err, options.cancelled);
      response = json(answer.body, answer.status, answer.headers);
      refusal = answer.refusal;
      if (answer.failure) failure = failureOf(err, answer.failure);
    }
    if (!onFastPath(request)) response = withBody(response);
    return logRequest(request, response, rule?.pattern ?? pattern, started, failure, refusal);
  };
}

// Only a target that may hold U+0000 is parsed as a URL (parsing every one was ~1% of a hot request's CPU).
const MAY_HOLD_NUL = /%00|\u0000/;

/** PostgreSQL text cannot hold U+0000: a path or query value with one is a 400 naming it, before anything else. */
function refuseNul(url: URL) {
  if (!/%00/.test(url.pathname + url.search)) return;
  if (/%00/.test(url.pathname)) throw badRequest('path: contains the character U+0000, which PostgreSQL cannot store');
  for (const [key, value] of url.searchParams) {
    if (key.includes('\0') || value.includes('\0'))
      throw badRequest(`${key.replace(/\0/g, '')}: contains the character U+0000, which PostgreSQL cannot store`);
  }
}

/** Reads a JSON body, refusing another content type (415), more than MAX_BODY_BYTES (413) and malformed JSON (400). */
export async function readJson(request: Request): Promise<unknown> {
  const limit = config().maxBodyBytes;
  const type = request.headers.get('content-type');
  if (type !== null && !JSON_TYPE.test(type)) {
    throw new HttpError(415, `content-type must be application/json, not ${type.slice(0, 100)}`);
  }
  // The rest of the body is never read, so the connection cannot carry another request: say so.
  const tooLarge = () => new HttpError(413, `request body exceeds ${limit} bytes`, undefined, { connection: 'close' });
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  // a web stream, or Node's request itself (scripts/serve.mjs); leaving the loop cancels the stream
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  if (type === null) throw new HttpError(415, 'content-type must be application/json');
  const { depth, inexact } = scan(text);
  if (depth > MAX_JSON_DEPTH)
    throw badRequest(`body: nested ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON body: ${(err as Error).message}`);
  }
  // a number JavaScript cannot hold as written stays as written in user data (lib/exact-json.ts)
  if (inexact) body = exactOnlyIn(parseExact(text), USER_DATA);
  if (NUL_ESCAPE.test(text)) {
    throw badRequest(`${pathOfNul(body) ?? 'body'}: contains the character U+0000, which PostgreSQL cannot store`);
  }
  return body;
}

/**
 * Deeper JSON than this is refused: every later step (validation, JSON.stringify, PostgreSQL's
 * jsonb parser) recurses per level and would fail with a 500 somewhere past a few thousand.
 */
export const MAX_JSON_DEPTH = 100;

/** Where a body carries user data, kept exactly as written: payloads, stream state values. */
const USER_DATA: ReadonlySet<string> = new Set(['payload', 'value']);

/**
 * In one pass over a JSON text (strings skipped): the deepest nesting of arrays and objects, and
 * whether some number is written in a way a JavaScript number would not write back.
 */
function scan(text: string): { depth: number; inexact: boolean } {
  let depth = 0;
  let max = 0;
  let inString = false;
  let inexact = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
    } else if (c === 93 || c === 125) depth--;
    else if ((c >= 48 && c <= 57) || c === 45) {
      const start = i;
      for (
        let d = c;
        (d >= 48 && d <= 57) || d === 45 || d === 43 || d === 46 || d === 101 || d === 69;
        d = text.charCodeAt(++i)
      );
      if (!inexact && !isExactNumber(text.slice(start, i))) inexact = true;
      i--;
    }
  }
  return { depth: max, inexact };
}

const JSON_TYPE = /^\s*application\/([\w.+-]+\+)?json\s*(;|$)/i;

// A JSON escape of U+0000 (not an escaped backslash followed by "u0000"): neither text nor jsonb
// columns can hold that character, so a body carrying one is refused before anything is written.
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

function pathOfNul(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pathOfNul(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (k.includes('\0')) return here;
      const found = pathOfNul(v, here);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
