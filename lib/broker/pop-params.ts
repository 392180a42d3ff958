// The query parameters of the pop routes, each described once (issue 31): how its text parses and
// its bounds, its default, what it means, the argument of queen.pop it is passed as, and its field
// on the console's Try-pop form. Everything else is derived from POP_QUERY: the routes' zod
// contract (popQuery), PopParams, the OpenAPI parameters (POP_PARAMS, lib/http/contracts.ts), the
// pop's SQL call and a parked pop's entry of p_waiters (lib/broker/pop.ts), the console's form
// (consoleParams, components/console/) and the pop-target check (lib/dashboard/pop-target.ts).
import { z } from 'zod';
import { config } from '@/lib/config.mjs';
import { HttpError } from './errors';
import { CONFIGURED_QUEUE_DEFAULTS, IMPLICIT_QUEUE_DEFAULTS } from './option-defaults';
import { ISO_WITH_ZONE, name, parseWith, queryInteger } from './validate';

const INT32_MAX = 2147483647;

const integer = queryInteger(-INT32_MAX, INT32_MAX);

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** The three pop routes: by queue, by partition, across a namespace and/or task. */
export type PopRoute = 'queue' | 'partition' | 'discovery';

/** A field of the console's Try-pop form (plain data: the page hands it to the client). */
export interface ConsoleField {
  /** the text above the field */
  label: string;
  /** a number, free text, or a choice of [value, text] ('' leaves the parameter out) */
  input: 'number' | 'text' | readonly (readonly [string, string])[];
  /** the form's starting value, when not '' (the server's default) */
  initial?: string;
}

interface PopParam<S extends z.ZodType, D> {
  /** parses the query string's text; its bounds are the 400s */
  schema: S;
  /** the value when the parameter is absent; a function: read from the configuration per call */
  default: D;
  /** what it means (the OpenAPI document) */
  doc: string;
  /**
   * The argument of queen.pop and queen.pop_or_why it is passed as (sql/functions/pop.sql). A
   * parked pop passes it in its entry of queen.claim_for_waiters' p_waiters under its own name,
   * unless `scope`: one of claim_for_waiters' own arguments, taken from the parked pops' scope
   * (ScopeKey, lib/broker/waiters.ts).
   */
  sql?: { arg: `p_${string}`; type: 'integer' | 'boolean' | 'text' | 'timestamptz'; scope?: true };
  /** The routes that read it (all when absent); the others take the default. */
  routes?: readonly PopRoute[];
  /**
   * Its field among the options of the console's form. namespace, task and consumerGroup name
   * what is popped and stand with the route (components/console/pop-form.tsx).
   */
  console?: ConsoleField;
}

type Value<S extends z.ZodType> = Exclude<z.output<S>, undefined>;

const param = <S extends z.ZodType, const D extends Value<S> | (() => Value<S>) | undefined>(p: PopParam<S, D>) => p;

/** `new` (or `new-only`, any case) skips the backlog of a new cursor; anything else starts at the oldest message. */
const startMode = (v: string): 'new' | 'all' => (['new', 'new-only'].includes(v.toLowerCase()) ? 'new' : 'all');

/** A time without a zone would be read in some server's zone: unparseable, so ignored (the spec). */
function startTime(value: string): string | undefined {
  if (!value) return undefined;
  if (value.toLowerCase() === 'now') return 'now';
  if (!ISO_WITH_ZONE.test(value) || Number.isNaN(Date.parse(value))) return undefined;
  return new Date(value).toISOString();
}

/** Every query parameter of the pop routes, in the order of the OpenAPI document and the console's URLs. */
export const POP_QUERY = {
  batch: param({
    schema: integer.pipe(z.number().min(1, 'must be at least 1')),
    default: 200,
    doc: 'Total message budget for the call, shared across partitions.',
    sql: { arg: 'p_batch', type: 'integer' },
    console: { label: 'batch', input: 'number', initial: '10' },
  }),
  partitions: param({
    schema: integer,
    default: 1,
    doc: 'How many partitions one call may claim; 0 or less: no cap. Ignored by the single-partition route.',
    sql: { arg: 'p_max_partitions', type: 'integer' },
    routes: ['queue', 'discovery'],
    console: { label: 'partitions (≤ 0: no cap)', input: 'number', initial: '1' },
  }),
  leaseSeconds: param({
    schema: integer.transform((v) => Math.max(0, v)),
    default: 0,
    doc: `Lease for this call; 0 or less: the queue's leaseTime (${IMPLICIT_QUEUE_DEFAULTS.leaseTime} for an implicit queue, ${CONFIGURED_QUEUE_DEFAULTS.leaseTime} once configured).`,
    sql: { arg: 'p_lease_seconds', type: 'integer' },
    console: { label: "leaseSeconds (empty: queue's)", input: 'number' },
  }),
  autoAck: param({
    schema: flag,
    default: false,
    doc: 'Commit the cursor inside the pop (at-most-once); the response then has an empty leaseId.',
    sql: { arg: 'p_auto_ack', type: 'boolean' },
    console: {
      label: 'autoAck',
      input: [
        ['false', 'false (lease)'],
        ['true', 'true (at-most-once)'],
      ],
      initial: 'false',
    },
  }),
  wait: param({
    schema: flag,
    default: false,
    doc: 'Long-poll until messages arrive or `timeout` passes.',
    console: {
      label: 'wait',
      input: [
        ['false', 'false'],
        ['true', 'true (long poll)'],
      ],
      initial: 'false',
    },
  }),
  timeout: param({
    schema: integer.pipe(z.number().min(0, 'must not be negative')),
    default: () => config().pop.defaultTimeoutMs,
    doc: 'Long-poll deadline in ms (with wait=true); the default is this server’s: DEFAULT_TIMEOUT, else POP_DEFAULT_TIMEOUT_MS.',
    console: { label: 'timeout (ms)', input: 'number', initial: '5000' },
  }),
  consumerGroup: param({
    schema: name.transform((v) => v || undefined),
    default: '__QUEUE_MODE__',
    doc: 'The group; empty or absent: queue mode.',
    sql: { arg: 'p_group', type: 'text', scope: true },
  }),
  subscriptionMode: param({
    schema: z.string().transform(startMode),
    default: 'all',
    doc: '`all` or `new` (`new` skips the backlog): seeds a cursor that does not exist yet.',
    sql: { arg: 'p_subscription_mode', type: 'text', scope: true },
    console: {
      label: 'subscriptionMode',
      input: [
        ['', '(default: all)'],
        ['all', 'all'],
        ['new', 'new'],
      ],
    },
  }),
  subscriptionFrom: param({
    // 'now' stays 'now': PostgreSQL resolves it, on its clock, not this server's
    schema: z.string().transform(startTime),
    default: undefined,
    doc: '`now` or an ISO-8601 timestamp with a zone (else ignored): seeds a cursor that does not exist yet.',
    sql: { arg: 'p_subscription_from', type: 'timestamptz', scope: true },
    console: { label: 'subscriptionFrom (now or ISO)', input: 'text' },
  }),
  namespace: param({
    schema: name,
    default: '',
    doc: 'Discovery route: queues of this namespace.',
    sql: { arg: 'p_namespace', type: 'text', scope: true },
    routes: ['discovery'],
  }),
  task: param({
    schema: name,
    default: '',
    doc: 'Discovery route: queues of this task.',
    sql: { arg: 'p_task', type: 'text', scope: true },
    routes: ['discovery'],
  }),
};

type PopQuery = typeof POP_QUERY;
export type PopParamName = keyof PopQuery;

/** A pop's parameters, every default filled in. */
export type PopParams = {
  [K in PopParamName]:
    | Value<PopQuery[K]['schema']>
    | (PopQuery[K]['default'] extends () => infer R ? R : PopQuery[K]['default']);
};

const NAMES = Object.keys(POP_QUERY) as PopParamName[];
type AnyParam = PopParam<z.ZodType, unknown>;
const described = (k: PopParamName): AnyParam => POP_QUERY[k];

/** The default of parameter `k`, read now. */
export function popDefault<K extends PopParamName>(k: K): PopParams[K] {
  const d = described(k).default;
  return (typeof d === 'function' ? d() : d) as PopParams[K];
}

/** The query string's contract, as the routes validate it (and the OpenAPI document states it). */
export const popQuery = z.object(
  Object.fromEntries(NAMES.map((k) => [k, POP_QUERY[k].schema.optional()])) as {
    [K in PopParamName]: z.ZodOptional<PopQuery[K]['schema']>;
  },
);

/** The query string of a pop route, with the spec's defaults; a value that fails to parse is a 400. */
export function parsePopQuery(search: URLSearchParams): PopParams {
  const raw: Record<string, string> = {};
  for (const k of NAMES) {
    const v = search.get(k);
    if (v !== null) raw[k] = v;
  }
  const q: Record<string, unknown> = parseWith(popQuery, raw, 'query');
  return Object.fromEntries(NAMES.map((k) => [k, q[k] ?? popDefault(k)])) as PopParams;
}

/** What a route reads of `p`: a parameter it ignores takes its default (one partition, no namespace...). */
export function readBy(route: PopRoute, p: PopParams): PopParams {
  const ignored = NAMES.filter((k) => !(described(k).routes?.includes(route) ?? true));
  return { ...p, ...Object.fromEntries(ignored.map((k) => [k, popDefault(k)])) };
}

/** The parameters queen.pop takes, with the argument and the type each is passed as. */
export const POP_SQL_ARGUMENTS = NAMES.flatMap((k) => {
  const sql = described(k).sql;
  return sql ? [{ name: k, ...sql }] : [];
});

/** The OpenAPI document's parameters (lib/http/contracts.ts); a default is read when it is built. */
export const popParamDocs = () =>
  NAMES.map((k) => ({ name: k, description: described(k).doc, default: () => popDefault(k) }));

/** A parameter as the console's form needs it: plain data, for the page to hand to the client. */
export interface ConsoleParam {
  name: PopParamName;
  routes?: readonly PopRoute[];
  /** none: the form does not offer it among the options */
  field?: ConsoleField;
}

export const consoleParams = (): ConsoleParam[] =>
  NAMES.map((k) => ({ name: k, routes: described(k).routes, field: described(k).console }));

/** The discovery route refuses to scan every queue; the spec fixes this exact body. */
export function requireDiscoveryScope(p: PopParams): void {
  if (!p.namespace && !p.task) {
    throw new HttpError(400, 'namespace or task is required', {
      success: false,
      error: 'namespace or task is required',
      messages: [],
    });
  }
}
