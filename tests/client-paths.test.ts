// One typed client module per resource (issue 31): the dashboard names the API's paths only in
// components/client/*.ts, whose functions type their replies with the route table's schemas
// (components/client/answer.ts). Anywhere else in components/ and app/(dashboard)/ an inline
// `'/api/...'` path or a direct api() call fails here.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..');

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(path);
    return /\.(ts|tsx)$/.test(e.name) ? [path] : [];
  });
}

/** The code without its comments (a comment may name a route). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** Lines of `text` with a path literal of the API: a quote or backtick right before /api/ or /streams/. */
const inlinePaths = (text: string) =>
  code(text)
    .split('\n')
    .filter((line) => /['"`]\/(?:api|streams)\//.test(line));

/** Lines of `text` that call api() (components/api.ts) themselves. */
const apiCalls = (text: string) =>
  code(text)
    .split('\n')
    .filter((line) => /(?<![\w.])api\s*[<(]/.test(line));

const CLIENT = 'components/client/';
/** The fetch helper itself, and the live query that fetches a path a client module built. */
const PLUMBING = new Set(['components/api.ts', 'components/providers.tsx']);

const sources = [...filesUnder('components'), ...filesUnder('app/(dashboard)')]
  .map((f) => relative(root, join(root, f)))
  .filter((f) => !f.startsWith(CLIENT) && !PLUMBING.has(f));

describe('API paths live in components/client', () => {
  it('finds what it checks', () => {
    expect(sources.length).toBeGreaterThan(40);
    expect(inlinePaths("const a = withSearch('/api/v1/leases', f);\n// GET /api/v1/leases\n")).toHaveLength(1);
    expect(inlinePaths('run={() => go(`/api/v1/leases/${id}/release`)}')).toHaveLength(1);
    expect(inlinePaths('<a href="/leases">/streams/v1</a>')).toEqual([]);
    expect(apiCalls("await api('DELETE', x);\nawait api<T>('GET', p);\nconst x = openapi(1);")).toHaveLength(2);
  });

  it('no inline path outside the client modules', () => {
    expect(
      sources.flatMap((f) => inlinePaths(readFileSync(join(root, f), 'utf8')).map((l) => `${f}: ${l.trim()}`)),
    ).toEqual([]);
  });

  it('no api() call outside the client modules', () => {
    expect(
      sources.flatMap((f) => apiCalls(readFileSync(join(root, f), 'utf8')).map((l) => `${f}: ${l.trim()}`)),
    ).toEqual([]);
  });
});
