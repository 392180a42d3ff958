import { z } from 'zod';
import { badRequest } from './errors';

function fieldPath(path: PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/** Parses with a zod contract; a failure is a 400 naming the first offending field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue.path.length ? fieldPath(issue.path) : what;
  throw badRequest(`${where}: ${issue.message}`);
}

/** An integer from a query string, within [min, max]. */
export const queryInteger = (min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number).pipe(z.number().int().min(min).max(max));

/** A point in time given as ISO-8601 (anything Date.parse reads). */
export const isoTimestamp = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO-8601 timestamp');
