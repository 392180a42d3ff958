import { sql, type SQL } from 'drizzle-orm';

/**
 * The one rule for free-text filters (lease holder, partition name, audit target): a substring in
 * any case, taken literally, so a `_` or `%` in a partition name is not a wildcard.
 */
export function containsText(column: SQL, text: string | null | undefined): SQL {
  if (!text) return sql`true`;
  return sql`${column} ilike ${`%${text.replace(/[\\%_]/g, '\\$&')}%`}`;
}
