/** The query string of the filters that have a value. */
export function searchOf(filters: Record<string, string | undefined>): URLSearchParams {
  return new URLSearchParams(Object.entries(filters).filter((e): e is [string, string] => Boolean(e[1])));
}

/** `path` with the filters that have a value as its query string. */
export function withSearch(path: string, filters: Record<string, string | undefined>): string {
  const qs = searchOf(filters);
  return qs.size ? `${path}?${qs}` : path;
}
