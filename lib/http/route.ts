import { config } from '@/lib/config.mjs';
import { HttpError, badRequest, driverError, isPoolError, isStatementCancelled } from './errors';

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** A pre-serialized JSON body (the hot paths build their bodies as text). */
export function rawJson(text: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

interface RouteOptions {
  /** The `error` text when PostgreSQL cancels a statement of this route (statement timeout). */
  cancelled?: string;
}

/** Every 500 and 503 says when to try again, so a client backs off instead of spinning. */
export const RETRY_AFTER = { 'retry-after': '1' };

/**
 * Wraps a route handler in the one error envelope: HttpError → its status and message, no pool
 * connection → 500 {"error":"pool"}, a cancelled statement → 500 with the route's own message,
 * anything else → 500 {"error":"internal error"} (details go to the log, never to the client).
 */
export function route<C>(handler: (request: Request, context: C) => Promise<Response>, options: RouteOptions = {}) {
  return async (request: Request, context: C): Promise<Response> => {
    try {
      return await handler(request, context);
    } catch (err) {
      if (err instanceof HttpError) return json(err.body ?? { error: err.message }, err.status, err.headers);
      if (isPoolError(err)) return json({ error: 'pool' }, 500, RETRY_AFTER);
      if (isStatementCancelled(err)) return json({ error: options.cancelled ?? 'statement timeout' }, 500, RETRY_AFTER);
      // The driver's own error, not Drizzle's wrapper: that one quotes the query's parameters (payloads).
      const e = driverError(err);
      console.error(`[api] ${request.method} ${new URL(request.url).pathname}: ${e?.code ? `${e.code} ` : ''}${e?.message ?? String(err)}`);
      return json({ error: 'internal error' }, 500, RETRY_AFTER);
    }
  };
}

/** Reads a JSON body, refusing more than MAX_BODY_BYTES (413) and malformed JSON (400). */
export async function readJson(request: Request): Promise<unknown> {
  const limit = config().maxBodyBytes;
  // The rest of the body is never read, so the connection cannot carry another request: say so.
  const tooLarge = () => new HttpError(413, `request body exceeds ${limit} bytes`, undefined, { connection: 'close' });
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON body: ${(err as Error).message}`);
  }
  if (NUL_ESCAPE.test(text)) {
    throw badRequest(`${pathOfNul(body) ?? 'body'}: contains the character U+0000, which PostgreSQL cannot store`);
  }
  return body;
}

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
