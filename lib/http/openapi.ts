// The OpenAPI 3.1 description of every route, served at GET /api/v1/openapi.json, generated from
// the route table (lib/http/route-table.ts): request bodies and query strings from the zod schemas
// the routes validate with (z.toJSONSchema, input side), success answers from each entry's
// `schemas` (output side), status texts from its `responses`.
import { z } from 'zod';
import pkg from '@/package.json';
import type { Level } from './access';
import { int, iso, str, uuid, type JsonSchema, type RouteDoc } from './contracts';
import { FIELD_DOCS } from './field-docs';
import { ROUTES } from './route-table';

/** `/api/v1/pop/queue/[queue]` → `/api/v1/pop/queue/{queue}` (and `[...rest]` → `{rest}`). */
export const openApiPath = (pattern: string) => pattern.replace(/\[(?:\.\.\.)?(\w+)\]/g, '{$1}');

const toSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return describeFields(rest) as JsonSchema;
};

/**
 * A success answer's schema: what the code answers (output side of its zod schema), open to fields
 * a later release adds, so that a client generated from this document keeps working against it
 * (tests/response-schemas.test.ts checks the answers with every object closed).
 */
const toResponseSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return describeFields(openObjects(rest)) as JsonSchema;
};

/** The description of field `name` under `parent`: `parent.name`, else `name` (lib/http/field-docs.ts). */
export function fieldDoc(name: string, parent?: string): string | undefined {
  const key = parent !== undefined && `${parent}.${name}` in FIELD_DOCS ? `${parent}.${name}` : name;
  if (!(key in FIELD_DOCS)) return undefined;
  fieldDocsUsed.add(key);
  return FIELD_DOCS[key];
}

/** The entries of FIELD_DOCS the document used (tests/field-docs.test.ts: none is left over). */
export const fieldDocsUsed = new Set<string>();

const TYPE_TEXTS = new Set([iso.description, uuid.description]);

/** Every property without a description of its own gets the one of its name (lib/http/field-docs.ts). */
function describeFields(node: unknown, parent?: string): unknown {
  if (Array.isArray(node)) return node.map((n) => describeFields(n, parent));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => {
      if (k !== 'properties' || !v || typeof v !== 'object') return [k, describeFields(v, parent)];
      const properties = Object.entries(v as Record<string, JsonSchema>).map(([name, schema]) => {
        const described = describeFields(schema, name) as JsonSchema;
        const own = described.description as string | undefined;
        // a shared type's text (`iso`, `uuid` of lib/http/contracts.ts) says what it is, not what it means
        const text =
          own === undefined || TYPE_TEXTS.has(own)
            ? [fieldDoc(name, parent), own].filter(Boolean).join('; ') || undefined
            : own;
        return [name, text === undefined ? described : { ...described, description: text }];
      });
      return [k, Object.fromEntries(properties)];
    }),
  );
}

function openObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openObjects);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'additionalProperties' && v === false))
      .map(([k, v]) => [k, openObjects(v)]),
  );
}

const jsonContent = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ERROR = { $ref: '#/components/schemas/Error' };

/** What every route of its kind may answer: the envelope of route() and readJson(). */
function commonResponses(method: string, level: Level, body: boolean): Record<number, string> {
  const common: Record<number, string> = {
    500: 'No database connection in time ({"error":"pool"}) or a cancelled statement',
  };
  if (level !== 'public') {
    Object.assign(common, {
      401: 'No token, or one that does not verify (auth on)',
      403: `The token lacks the ${level} role, or a cross-site request`,
      503: 'The signing keys (JWT_JWKS_URL) could not be fetched',
    });
  } else if (method !== 'GET') common[403] = 'A cross-site request';
  if (body)
    Object.assign(common, {
      400: 'Malformed JSON or a field that fails validation: {"error":"<field>: <why>"}',
      413: 'Body above MAX_BODY_BYTES',
      415: 'Content-Type is not application/json',
    });
  else common[400] = 'A path or query value that fails validation';
  return common;
}

function parametersOf(pattern: string, op: RouteDoc): unknown[] {
  const path = [...pattern.matchAll(/\[(?:\.\.\.)?(\w+)\]/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: str,
  }));
  const fromZod = op.query ? toSchema(op.query) : { properties: {}, required: [] };
  const properties = (fromZod.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((fromZod.required ?? []) as string[]);
  const hand = new Map((op.params ?? []).map((p) => [p.name, p]));
  const names = [...new Set([...Object.keys(properties), ...hand.keys()])];
  const query = names.map((name) => {
    const p = hand.get(name);
    const description = p?.description ?? (properties[name]?.description as string | undefined) ?? fieldDoc(name);
    const schema = properties[name] ?? p?.schema ?? int;
    // as the query string would carry it: the schema is of the text
    const stated = p?.default?.();
    return {
      name,
      in: 'query',
      required: required.has(name) || (p?.required ?? false),
      schema: stated === undefined ? schema : { ...schema, default: String(stated) },
      ...(description ? { description } : {}),
    };
  });
  return [...path, ...query];
}

function operationOf(key: string, op: RouteDoc, level: Level) {
  const [method] = key.split(' ');
  const statuses = { ...commonResponses(method, level, op.body !== undefined), ...op.responses };
  const responses = Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => {
      const code = Number(status);
      const success = (ROUTES as Record<string, { schemas: Record<number, z.ZodType> }>)[key]?.schemas[code];
      // a success without a schema in lib/http/responses.ts gets the empty one: tests/response-schemas.test.ts names it
      const content =
        code === 204
          ? undefined
          : code < 300
            ? { [op.produces ?? 'application/json']: { schema: success ? toResponseSchema(success) : {} } }
            : jsonContent(ERROR);
      return [status, content ? { description, content } : { description }];
    }),
  );
  return {
    operationId: key.replace(/[^\w]+/g, '_').replace(/_+$/, ''),
    summary: op.summary,
    tags: [op.tag],
    ...(op.description ? { description: op.description } : {}),
    'x-required-role': level,
    parameters: parametersOf(key.split(' ')[1], op),
    ...(op.body
      ? {
          requestBody: {
            required: !op.optionalBody,
            content: {
              'application/json': {
                schema: toSchema(op.body),
                ...(op.example !== undefined ? { example: op.example } : {}),
              },
            },
          },
        }
      : {}),
    responses,
    security: level === 'public' ? [] : [{ bearer: [] }],
  };
}

let cached: object | undefined;

/** The document; built once per process (the schemas do not change while it runs). */
export function openApiDocument(): object {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, route] of Object.entries(ROUTES)) {
    const [method, pattern] = key.split(' ');
    (paths[openApiPath(pattern)] ??= {})[method.toLowerCase()] = operationOf(key, route, route.access);
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'queen-pg',
      version: pkg.version,
      description:
        'A lease-based partitioned message-queue broker on PostgreSQL, wire-compatible with the Queen MQ HTTP API. Prose reference: docs/api.md. `x-required-role` is the role a route needs when JWT_ENABLED=true.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/' }],
    tags: [...new Set(Object.values(ROUTES).map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'role claim: read-only < read-write < admin',
        },
      },
    },
  };
  return cached;
}
