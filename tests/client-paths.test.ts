// One typed client module per resource (issue 31): the dashboard names the API's paths only in
// components/client/*.ts, whose functions type their replies with the route table's schemas
// (components/client/answer.ts). Anywhere else in components/ and app/(dashboard)/ an inline
// `'/api/...'` path, a direct api() call, or a type declared again under the name a client module
// exports it by fails here; so does a <table> that is not the one table primitive (ListTable).
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

/** The names of the types `text` (a client module) exports. */
const exportedTypes = (text: string) => [...text.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]);

/** Lines of `text` that declare a type or interface named one of `names` (not those that import one). */
const declarations = (text: string, names: Set<string>) =>
  code(text)
    .split('\n')
    .filter((line) => {
      const declared = /^\s*(?:export\s+)?(?:type\s+(\w+)(?:<.*>)?\s*=|interface\s+(\w+))/.exec(line);
      return declared !== null && names.has(declared[1] ?? declared[2]);
    });

describe("the API's types are declared in components/client", () => {
  const clientTypes = new Set(filesUnder(CLIENT).flatMap((f) => exportedTypes(readFileSync(join(root, f), 'utf8'))));

  it('finds what it checks', () => {
    expect([...clientTypes]).toEqual(
      expect.arrayContaining(['AuditEntry', 'DeadLetter', 'MessageDetail', 'SeekPreview']),
    );
    expect(
      declarations(
        'interface SeekPreview {\nexport type DeadLetter = {\ntype Other = 1;\nimport {\n  type AuditEntry,',
        clientTypes,
      ),
    ).toHaveLength(2);
  });

  it('no view declares again a type a client module exports', () => {
    expect(
      sources.flatMap((f) =>
        declarations(readFileSync(join(root, f), 'utf8'), clientTypes).map((l) => `${f}: ${l.trim()}`),
      ),
    ).toEqual([]);
  });
});

/**
 * The tables that are not lists of a page: the Live page's per-partition counters (small print in
 * a side column) and the seek dialog's preview of the changes.
 */
const NOT_LISTS = new Set(['components/pages/live-view.tsx', 'components/seek-action.tsx']);

describe('every list is a ListTable (components/list-table.tsx)', () => {
  it('no other <table> in components/ or app/(dashboard)/', () => {
    expect(
      sources
        .filter((f) => f !== 'components/list-table.tsx' && !NOT_LISTS.has(f))
        .filter((f) => /<table\b/.test(code(readFileSync(join(root, f), 'utf8')))),
    ).toEqual([]);
  });
});
