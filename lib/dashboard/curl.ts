/** One word for a POSIX shell: in single quotes, a `'` inside closing, escaping and reopening them. */
export const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The curl command line that sends what a console sends: `url` absolute, `body` the exact JSON text
 * (a POST). `include` shows the status line and headers (`-i`), as a pop's `X-Queen-Empty` needs.
 */
export function curlCommand(url: string, { include = false, body }: { include?: boolean; body?: string } = {}) {
  const words = ['curl', '-sS'];
  if (include) words.push('-i');
  words.push(shellQuote(url));
  if (body !== undefined) words.push('-H', shellQuote('content-type: application/json'), '-d', shellQuote(body));
  return words.join(' ');
}
