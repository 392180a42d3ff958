/** The message browser's URL parameters (`group` is GET /api/v1/messages's `consumerGroup`). */
export const MESSAGE_BROWSER_FILTERS = ['queue', 'partition', 'group', 'status', 'q', 'from', 'to', 'page'] as const;

export const MESSAGE_BROWSER_PAGE_SIZE = 50;

export const MESSAGE_STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const;

/** The GET /api/v1/messages query of the browser's filters. */
export function messageBrowserQuery(f: Record<string, string | undefined>): Record<string, string | undefined> {
  const page = Math.max(1, Number(f.page ?? 1) || 1);
  return {
    queue: f.queue,
    partition: f.partition,
    consumerGroup: f.group,
    status: f.status,
    q: f.q,
    from: f.from,
    to: f.to,
    limit: String(MESSAGE_BROWSER_PAGE_SIZE),
    offset: String((page - 1) * MESSAGE_BROWSER_PAGE_SIZE),
  };
}
