import { z } from 'zod';
import { badRequest } from './errors';

function fieldPath(path: PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
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
  z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** ISO 8601 with a date, a time and a zone (`Z` or an offset): a time without a zone would be read in the server's own. */
export const ISO_WITH_ZONE = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d(:?\d\d)?)$/;

/** A point in time given as ISO 8601 with a zone. */
export const isoTimestamp = z
  .string()
  .refine(
    (v) => ISO_WITH_ZONE.test(v) && !Number.isNaN(Date.parse(v)),
    'must be an ISO-8601 timestamp with a zone (Z or ±hh:mm)',
  );

/**
 * Names and ids end up in index keys, which PostgreSQL caps at about 2,700 bytes: a longer one is
 * refused with a 400 naming the field, before anything is written.
 */
export const MAX_NAME_BYTES = 512;

export const name = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_NAME_BYTES, `must be at most ${MAX_NAME_BYTES} bytes`)
  .refine((v) => !v.includes('\0'), 'contains the character U+0000, which PostgreSQL cannot store');

/** The same cap for a name taken from the path. */
export function pathName(value: string, field: string): string {
  if (Buffer.byteLength(value, 'utf8') > MAX_NAME_BYTES)
    throw badRequest(`${field}: must be at most ${MAX_NAME_BYTES} bytes`);
  return value;
}

/**
 * Free text an operator gives with an action (`reason`), stored in the audit log: at most 500
 * characters, no control characters but line breaks and tabs. Longer or odd text is refused, not cut.
 */
export const MAX_REASON_CHARS = 500;

export const reasonText = z
  .string()
  .max(MAX_REASON_CHARS, `must be at most ${MAX_REASON_CHARS} characters`)
  .refine((v) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(v), 'must not contain control characters')
  .nullish();

/** `?reason=` of a DELETE, under the same rules. */
export const queryReason = (search: URLSearchParams) => parseWith(reasonText, search.get('reason'), 'reason') ?? null;

/** Past this, a page is refused: an offset is read and thrown away row by row. */
export const MAX_PAGE_OFFSET = 100_000;

/** `limit` (1…max) and `offset` of a paged read, to spread into a query contract. */
export const pageQuery = (maxLimit: number) => ({
  limit: queryInteger(1, maxLimit).optional(),
  offset: queryInteger(0, MAX_PAGE_OFFSET).optional(),
});
