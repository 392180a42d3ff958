// GET /api/v1/stats: rates and lag over a window.

/** The live query's path; `query` holds queue, group, minutes, points. */
export const statsPath = (query: URLSearchParams | string) => `/api/v1/stats?${query}`;
