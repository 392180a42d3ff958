// Every field declared once (issue 31): the OpenAPI document describes every field of every
// answer, body and query string (the zod schema's own `.describe()`, else lib/http/field-docs.ts),
// and docs/api.md, which keeps semantics and examples, lists no fields of its own: no table keyed
// by field names, no list of bare keys like `{"a","b"}`, no query parameter with its default or bounds.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePopQuery, popParamDocs } from '@/lib/broker/pop-params';
import { FIELD_DOCS } from '@/lib/http/field-docs';
import { fieldDocsUsed, openApiDocument } from '@/lib/http/openapi';

type Schema = { properties?: Record<string, Schema>; description?: string; [k: string]: unknown };
type Operation = {
  parameters: { name: string; in: string; description?: string; schema?: { default?: unknown } }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
};

/** `where.field` of every property under `node` that has no description. */
function undescribed(node: unknown, where: string, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) undescribed(n, where, out);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && v && typeof v === 'object')
        for (const [name, schema] of Object.entries(v as Record<string, Schema>)) {
          if (!schema.description) out.push(`${where}.${name}`);
          undescribed(schema, `${where}.${name}`, out);
        }
      else undescribed(v, where, out);
    }
  return out;
}

const doc = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
);

describe('the OpenAPI document describes every field', () => {
  it('of every answer', () => {
    const missing = operations.flatMap(({ key, op }) =>
      Object.entries(op.responses).flatMap(([status, r]) => undescribed(r.content ?? {}, `${key} ${status}`)),
    );
    expect(missing).toEqual([]);
  });

  it('of every body and query string', () => {
    const missing = operations.flatMap(({ key, op }) => [
      ...undescribed(op.requestBody?.content ?? {}, `${key} body`),
      ...op.parameters.filter((p) => p.in === 'query' && !p.description).map((p) => `${key} ?${p.name}`),
    ]);
    expect(missing).toEqual([]);
  });

  it('with no entry of lib/http/field-docs.ts left describing nothing', () => {
    expect(Object.keys(FIELD_DOCS).filter((k) => !fieldDocsUsed.has(k))).toEqual([]);
  });

  it('from the zod schema first: a field-docs entry never hides a .describe() text', () => {
    const leases = doc.paths['/api/v1/leases'].get.responses['200'].content!['application/json'].schema;
    const row = (leases.properties!.leases as { items: Schema }).items;
    expect(row.properties!.subject.description).toBe('with auth on, the subject of the token that took the lease');
    expect(row.properties!.state.description).toBe(FIELD_DOCS['leases.state']);
    expect(row.properties!.queue.description).toBe(FIELD_DOCS.queue);
  });
});

describe('the pop routes state their query parameters from lib/broker/pop-params.ts', () => {
  const POP_OPERATIONS = [
    '/api/v1/pop',
    '/api/v1/pop/queue/{queue}',
    '/api/v1/pop/queue/{queue}/partition/{partition}',
    '/api/dashboard/pop-preview',
  ];

  it('every one, with its meaning and the default the routes fill in', () => {
    const defaults: Record<string, unknown> = parsePopQuery(new URLSearchParams());
    const expected = popParamDocs().map((p) => ({
      name: p.name,
      description: p.description,
      default: defaults[p.name] === undefined ? undefined : String(defaults[p.name]),
    }));
    for (const path of POP_OPERATIONS) {
      const names = new Set<string>(expected.map((p) => p.name));
      const stated = doc.paths[path].get.parameters
        .filter((p) => p.in === 'query' && names.has(p.name))
        .map((p) => ({ name: p.name, description: p.description, default: p.schema?.default }));
      expect([path, stated]).toEqual([path, expected]);
    }
  });
});

/** Status texts that list bare keys (`{now, total, leases:[...]}`): the schema says that. */
function bareKeyLists(text: string): boolean {
  return /[{[]\s*[A-Za-z_]\w*\??\s*(?::[^,{}[\]]*)?,\s*[A-Za-z_]\w*/.test(text);
}

describe('the route table says each answer once', () => {
  it('in its schema: no 2xx status text lists the fields again', () => {
    const lists = operations.flatMap(({ key, op }) =>
      Object.entries(op.responses)
        .filter(([status, r]) => status.startsWith('2') && bareKeyLists(r.description))
        .map(([status]) => `${key} ${status}`),
    );
    expect(lists).toEqual([]);
  });

  it('(the check finds what it is for)', () => {
    expect(bareKeyLists('{now, total, leases:[{leaseId, queue}]}')).toBe(true);
    expect(bareKeyLists('[{index, transaction_id}]')).toBe(true);
    expect(bareKeyLists('{"status":"healthy","database":"connected"}')).toBe(false);
    expect(bareKeyLists('{success:true, rows:[...]}')).toBe(true);
    expect(bareKeyLists('Every group with its lag, trend, members, leases and pauses')).toBe(false);
  });
});

/** Markdown tables of docs/api.md whose first column names fields (`name` or `a`, `b`). */
function fieldTables(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((line) => /^\|\s*`[A-Za-z_][\w.]*`\s*(?:[,+]\s*`[A-Za-z_][\w.]*`\s*)*\|/.test(line));
}

/** Inline code that lists bare keys (`{"a","b"}`, `[{"a","b"}]`): a field list, not an example. */
function keyLists(markdown: string): string[] {
  const spans = markdown.match(/`[^`\n]+`/g) ?? [];
  return spans.filter((span) => /[{,[]\s*"[A-Za-z_]\w*"\??\s*,\s*"[A-Za-z_]\w*"\??\s*[,}\]]/.test(span));
}

/**
 * Query parameters docs/api.md states again (paragraph by paragraph): a `Query:` list, a parameter
 * of the document with its default or bounds in parentheses (`limit` (1–100, default 50)), or a
 * route written with its list of parameters (`GET /x?queue=&group=`).
 */
function queryParameterLists(markdown: string, names: Set<string>): string[] {
  return markdown
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s*\n\s*/g, ' '))
    .flatMap((paragraph) => [
      ...(/\bQuery\b[^:`]*:\s*`/.test(paragraph) ? [paragraph] : []),
      ...[...paragraph.matchAll(/`(\w+)(?:=[^`]*)?`\s*\(([^)]*)\)/g)]
        .filter(([, name, said]) => names.has(name) && /\bdefault\b|\d\s*(?:–|-|to)\s*\d|at most/i.test(said))
        .map(([span]) => span),
      ...(paragraph.match(/`[A-Z]+ \/[^`\s]*\?(?:\w+=&)+\w+=`/g) ?? []),
    ]);
}

describe('docs/api.md lists no fields', () => {
  const api = readFileSync('docs/api.md', 'utf8');

  it('in a table keyed by field names', () => {
    expect(fieldTables(api)).toEqual([]);
  });

  it('as a list of bare keys', () => {
    expect(keyLists(api)).toEqual([]);
  });

  it('and no query parameters: the schema states each with its default and bounds', () => {
    const names = new Set(
      operations.flatMap(({ op }) => op.parameters.filter((p) => p.in === 'query').map((p) => p.name)),
    );
    expect(names).toContain('batch');
    expect(queryParameterLists(api, names)).toEqual([]);
  });

  it('(the checks themselves find what they are for)', () => {
    expect(
      fieldTables('| Field | Default |\n| --- | --- |\n| `queue` | |\n| `namespace`, `task` | empty |'),
    ).toHaveLength(2);
    expect(fieldTables('| Route | |\n| --- | --- |\n| `GET /api/v1/pop` | discovery |\n| `200` | ok |')).toEqual([]);
    expect(keyLists('`200`: `{"now","total","leases":[...]}`')).toHaveLength(1);
    expect(keyLists('`{"items":[{"queue":"q","partition":"p"}]}` and `["a-1","b-2"]`')).toEqual([]);
    const names = new Set(['limit', 'minutes', 'batch']);
    expect(queryParameterLists('Query: `queue`, `group`.', names)).toHaveLength(1);
    expect(queryParameterLists('over the last `minutes` (default 60,\nat most 1000), `limit` (1–100)', names)).toEqual([
      '`minutes` (default 60, at most 1000)',
      '`limit` (1–100)',
    ]);
    expect(queryParameterLists('- `GET /api/dashboard/pop-target?queue=&consumerGroup=`: whether', names)).toHaveLength(
      1,
    );
    expect(
      queryParameterLists('`limit` (a page) and `curl "$B/api/v1/pop/queue/q?batch=50"` (`batch` 50)', names),
    ).toEqual([]);
  });
});
