import { HttpError, isPoolError, isStatementCancelled } from '@/lib/broker/errors';

/** Every 500 and 503 says when to try again, so a client backs off instead of spinning. */
export const RETRY_AFTER = { 'retry-after': '1' };

/** What an error answers: status, body and headers; `refusal` or `failure` says what the log records. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** a refusal's message (4xx, or a 503 an operation chose) */
  refusal?: string;
  /** the kind of failure a 500 logs, with its cause (lib/http/request-log.ts) */
  failure?: string;
}

/**
 * The one error envelope: HttpError → its status and message (or the body the spec fixes), no pool
 * connection → 500 {"error":"pool"}, a cancelled statement → 500 with the route's own message
 * (`cancelled`), anything else → 500 {"error":"internal error"} (details go to the log, never to
 * the client).
 */
export function errorAnswer(err: unknown, cancelled = 'statement timeout'): ErrorAnswer {
  if (err instanceof HttpError)
    return { status: err.status, body: err.body ?? { error: err.message }, headers: err.headers, refusal: err.message };
  if (isPoolError(err))
    return { status: 500, body: { error: 'pool' }, headers: RETRY_AFTER, failure: 'no database connection in time' };
  if (isStatementCancelled(err))
    return { status: 500, body: { error: cancelled }, headers: RETRY_AFTER, failure: 'statement cancelled' };
  return { status: 500, body: { error: 'internal error' }, headers: RETRY_AFTER, failure: 'internal error' };
}
