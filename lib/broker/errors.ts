/**
 * An error whose message is safe to show the client, with the status to answer: the HTTP status
 * docs/api.md gives that outcome (the contract fixes refusals per operation, so an operation names
 * its own). Operations throw it; lib/http/errors.ts writes it as the one error envelope.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Replaces the `{"error": message}` envelope where the spec fixes a different body. */
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message: string) => new HttpError(404, message);

interface PgErrorLike {
  code?: string;
  message?: string;
  cause?: unknown;
}

/** Drizzle wraps driver errors; the PostgreSQL code sits on `cause`. */
export function driverError(err: unknown): PgErrorLike | undefined {
  let e = err as PgErrorLike | undefined;
  while (e && typeof e === 'object' && e.cause && !e.code) e = e.cause as PgErrorLike;
  return e && typeof e === 'object' ? e : undefined;
}

const CONNECTION_FAILURES = ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', '57P01', '57P03', '53300'];

/** No connection came from the pool in time, or the database could not be reached at all. */
export function isPoolError(err: unknown): boolean {
  const e = driverError(err);
  if (!e) return false;
  return (
    /timeout exceeded when trying to connect|Connection terminated/i.test(e.message ?? '') ||
    CONNECTION_FAILURES.includes(e.code ?? '')
  );
}

/** PostgreSQL cancelled the statement (statement_timeout or a cancel request). */
export const isStatementCancelled = (err: unknown) => driverError(err)?.code === '57014';
