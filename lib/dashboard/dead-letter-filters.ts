/** The query parameters of the dead letters page (`group` is GET /api/v1/dlq's `consumerGroup`). */
export const DEAD_LETTER_FILTERS = ['queue', 'partition', 'group', 'error', 'since', 'until', 'page'] as const;

/** Dead letters per page on the dashboard. */
export const DEAD_LETTERS_PAGE_SIZE = 50;

/** The GET /api/v1/dlq query of the page's filters. */
export function deadLetterQuery(f: Record<string, string | undefined>): Record<string, string | undefined> {
  const page = Math.max(1, Number(f.page ?? 1) || 1);
  return {
    queue: f.queue,
    partition: f.partition,
    consumerGroup: f.group,
    error: f.error,
    since: f.since,
    until: f.until,
    limit: String(DEAD_LETTERS_PAGE_SIZE),
    offset: String((page - 1) * DEAD_LETTERS_PAGE_SIZE),
  };
}

/** Error groups per page of /dead-letters/errors. */
export const ERROR_GROUPS_PAGE_SIZE = 50;
