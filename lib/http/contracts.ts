// What several routes of the route table (lib/http/route-table.ts) share: parameter lists and
// status texts of the OpenAPI document, and the zod schemas of answers more than one route gives.
import { popParamDocs } from '@/lib/broker/pop-params';
import { reasonText } from '@/lib/broker/validate';
import { ROLES } from './access';
import { z } from 'zod';
export type JsonSchema = Record<string, unknown>;

export interface Param {
  name: string;
  description?: string;
  schema?: JsonSchema;
  required?: boolean;
  /** Its default, read when the document is built (a configured one is this server's). */
  default?: () => unknown;
}

export interface RouteDoc {
  summary: string;
  tag: string;
  description?: string;
  /** The zod object the route parses its query string with. */
  query?: z.ZodType;
  /** Query parameters no zod object covers (read with searchParams.get), or descriptions of those it does. */
  params?: Param[];
  body?: z.ZodType;
  /** A body the route accepts; tests/openapi.test.ts sends it. */
  example?: unknown;
  /** Whether the body may be left out. */
  optionalBody?: boolean;
  /** Status → what it means, beyond those every route of its kind shares (see commonResponses). */
  responses: Record<number, string>;
  /** The 2xx content type when not JSON. */
  produces?: string;
}

export const str: JsonSchema = { type: 'string' };
export const int: JsonSchema = { type: 'string', pattern: '^-?\\d+$' };

/** The pop routes' query parameters, from their one description (lib/broker/pop-params.ts). */
export const POP_PARAMS: Param[] = popParamDocs();

export const POP_RESPONSES = {
  200: 'At least one message delivered, with the lease that holds them (none with autoAck)',
  204: 'Nothing delivered, pop maintenance on, or a stored-procedure error: no body (X-Queen-Empty says which)',
  400: 'A query parameter that fails to parse',
};

export const DELETE_REASON: Param = {
  name: 'reason',
  schema: z.toJSONSchema(reasonText, { io: 'input', unrepresentable: 'any' }),
  description: 'Recorded in the audit log (at most 500 characters).',
};

export const SEEK_EXAMPLE = { toEnd: true, reason: 'skip the backlog' };

export const iso = z.string().describe('ISO 8601 timestamp');
export const uuid = z.string().describe('UUID');

export const popMessage = z.object({
  id: uuid,
  transactionId: z.string(),
  traceId: z.string().nullable(),
  data: z.unknown().describe('the payload as pushed'),
  producerSub: z.string().nullable(),
  createdAt: iso,
  partitionId: uuid,
  partition: z.string(),
  leaseId: z.string(),
  consumerGroup: z.string(),
});

/** 200 of every pop route (204 has no body). leaseId is empty with autoAck. */
export const popResponse = z.object({
  success: z.boolean(),
  queue: z.string(),
  partition: z.string(),
  partitionId: uuid,
  leaseId: z.string(),
  consumerGroup: z.string(),
  messages: z.array(popMessage),
  partitionsClaimed: z.int(),
});

/** What a pop would deliver (the console's dry run): no lease taken, so no lease id. */
export const dryRunPop = popResponse.extend({
  leaseId: z.string().nullable(),
  messages: z.array(popMessage.extend({ leaseId: z.string().nullable() })),
});

export const pushResult = z.object({
  index: z.int(),
  transaction_id: z.string(),
  status: z.enum(['queued', 'duplicate']),
  message_id: uuid,
  partition_id: uuid,
  trace_id: z.string().nullable(),
  queueName: z.string(),
});

export const ackResult = z.object({
  index: z.int(),
  transactionId: z.string(),
  success: z.boolean(),
  error: z.string().nullable(),
  queueName: z.string().nullable(),
  partitionName: z.string().nullable(),
  leaseReleased: z.boolean(),
  dlq: z.boolean(),
});

export const trendSeries = z.object({
  queue: z.string(),
  group: z.string().nullable().describe('null: the queue as a whole'),
  at: z.array(z.number()).describe('epoch seconds'),
  pushed: z.array(z.number()),
  delivered: z.array(z.number()),
  acked: z.array(z.number()),
  failed: z.array(z.number()),
  lag: z.array(z.number()),
});

export const session = z.object({
  authEnabled: z.boolean(),
  signedIn: z.boolean(),
  subject: z.string().nullish(),
  role: z.enum(ROLES).nullish(),
  expiresAt: iso.nullish(),
});

export const deadLetterPreview = z.object({
  dryRun: z.literal(true),
  deadLetters: z.int(),
  messages: z.int(),
  notFound: z.int(),
  queues: z.array(
    z.object({
      queue: z.string(),
      deadLetters: z.int(),
      messages: z.int(),
      otherGroups: z.array(
        z.object({ group: z.string(), done: z.int(), pending: z.int(), leased: z.int(), deadLettered: z.int() }),
      ),
    }),
  ),
});

export const deadLetterResult = z.object({
  index: z.int(),
  partitionId: z.string(),
  consumerGroup: z.string(),
  offset: z.int(),
  success: z.boolean(),
  error: z.string().nullable(),
  queue: z.string().nullable(),
  partition: z.string().nullable(),
  transactionId: z.string().nullable(),
  lastError: z.string().nullable(),
  retryCount: z.int().nullable(),
});

/** Where the dashboard's reads come from, and how far behind (lib/dashboard/replica.ts). */
export const readSource = z
  .union([
    z.object({ reads: z.literal('primary').describe('Where the pages read: the primary (no DATABASE_READ_URL)') }),
    z.object({
      reads: z.literal('replica').describe('Where the pages read: the replica of DATABASE_READ_URL'),
      standby: z.boolean().describe('Whether DATABASE_READ_URL is a hot standby (in recovery)'),
      lagBytes: z
        .number()
        .describe('WAL the replica has not replayed: the primary’s position minus its replay position'),
      lagSeconds: z
        .number()
        .nullable()
        .describe('0 when caught up, else the age of the last transaction replayed (an upper bound), or null'),
      replayPaused: z.boolean().describe('Whether replay is paused on the replica'),
      primaryLsn: z.string().describe('The primary’s current WAL position'),
      replayLsn: z.string().nullable().describe('The replica’s replay position, or null'),
      lastReplayedAt: z.string().nullable().describe('Commit time of the last transaction replayed, or null'),
    }),
    z.object({
      reads: z.literal('replica').describe('Where the pages read: the replica of DATABASE_READ_URL'),
      error: z.string().describe('Why the replica could not be read'),
    }),
  ])
  .describe('Where the dashboard reads from, and how far behind it is');

export const figuresOfGroup = z.object({
  consumerGroup: z.string(),
  delivered: z.number(),
  acked: z.number(),
  failed: z.number(),
  deadLettered: z.number(),
  lagMessages: z.number(),
  lagSeconds: z.number(),
  leases: z.object({ live: z.number(), expired: z.number() }),
  pausedCursors: z.number(),
});
