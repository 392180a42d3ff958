import { randomUUID } from 'node:crypto';
import { log } from '@/lib/log.mjs';
import { metrics } from '@/lib/metrics/registry';
import { driverError } from '@/lib/broker/errors';
import { authEnabled, principalOf } from './auth';

/** What a 500 logs about its cause: the driver's code and message, never the query's parameters. */
export interface FailureContext {
  kind: string;
  code?: string;
  err: string;
}

/** Drizzle's own error quotes the query's parameters (payloads): only the driver's error is logged. */
export function failureOf(err: unknown, kind: string): FailureContext {
  const e = driverError(err);
  return { kind, code: e?.code, err: e?.message ?? String(err) };
}

/** A caller's X-Request-Id is kept when it is a plain token of sane length; otherwise one is made. */
const SANE_REQUEST_ID = /^[\w.:@+/=-]{1,128}$/;

const requestIdOf = (request: Request): string => {
  const given = request.headers.get('x-request-id');
  return given !== null && SANE_REQUEST_ID.test(given) ? given : randomUUID();
};

/** Control characters out, length bounded: a header value someone else chose, about to be logged. */
const headerValue = (request: Request, name: string): string | undefined => {
  const v = request.headers.get(name);
  return v === null ? undefined : v.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200);
};

/** The client's address, as scripts/serve.mjs saw the connection (a Request carries none). */
export const clientAddress = (request: Request): string | undefined =>
  (globalThis as { __queenClientAddress?: WeakMap<Request, string> }).__queenClientAddress?.get(request);

/**
 * The one log line of a request (route pattern, never the path or the query), its duration in the
 * request histogram, and its id echoed in X-Request-Id. A 4xx says why (`error`, the message the
 * client got); a 500 logs at error level with its cause. Each names the client's address and agent.
 */
export function logRequest(
  request: Request,
  response: Response,
  pattern: string | undefined,
  started: number,
  failure?: FailureContext,
  refusal?: string,
): Response {
  const ms = performance.now() - started;
  const requestId = requestIdOf(request);
  const route = pattern ?? 'unmatched';
  const status = response.status;
  metrics().requestDuration.observe({ route, method: request.method, status: String(status) }, ms / 1000);
  const line = {
    requestId,
    route,
    method: request.method,
    status,
    ms: Math.round(ms * 100) / 100,
    error: status >= 400 && status < 500 ? refusal : undefined,
    client: clientAddress(request),
    userAgent: headerValue(request, 'user-agent'),
    consumer: headerValue(request, 'x-queen-consumer'),
    actor: authEnabled() ? principalOf(request).subject : headerValue(request, 'x-queen-actor'),
    ...failure,
  };
  if (status >= 500) log('http').error(line, 'request failed');
  else log('http').info(line, 'request');
  return withRequestId(response, requestId);
}

function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set('x-request-id', requestId);
    return response;
  } catch {
    // immutable headers (Response.redirect, a fetched response): copy them
    const headers = new Headers(response.headers);
    headers.set('x-request-id', requestId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
